package io.tally.redirect;

import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.LoadingCache;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.cache.CaffeineCacheMetrics;
import java.time.Duration;
import java.util.Optional;

/**
 * Link lookups for the redirect path, served from memory in front of PostgreSQL.
 *
 * <p>Unknown codes are cached too (as empty), for a shorter time, so a flood of random codes costs one
 * query per distinct code per minute instead of one per request. A link created or disabled through this
 * process invalidates its entry at once; other instances see a change to a link within {@link #TTL}, and
 * a link created under a code they had cached as unknown within {@link #NEGATIVE_TTL}.
 */
public final class LinkCache {

  static final Duration TTL = Duration.ofSeconds(30);
  static final Duration NEGATIVE_TTL = Duration.ofSeconds(60);
  private static final long MAX_ENTRIES = 1_000_000;

  private final LoadingCache<String, Optional<Link>> cache;

  public LinkCache(LinkStore store, MeterRegistry registry) {
    this.cache =
        Caffeine.newBuilder()
            .maximumSize(MAX_ENTRIES)
            .expireAfter(
                new com.github.benmanes.caffeine.cache.Expiry<String, Optional<Link>>() {
                  @Override
                  public long expireAfterCreate(String key, Optional<Link> value, long now) {
                    return (value.isPresent() ? TTL : NEGATIVE_TTL).toNanos();
                  }

                  @Override
                  public long expireAfterUpdate(String key, Optional<Link> value, long now, long current) {
                    return expireAfterCreate(key, value, now);
                  }

                  @Override
                  public long expireAfterRead(String key, Optional<Link> value, long now, long current) {
                    return current;
                  }
                })
            .recordStats()
            .build(store::find);
    CaffeineCacheMetrics.monitor(registry, cache, "links");
    Gauge.builder("tally.link.cache.hit.ratio", cache, c -> c.stats().hitRate())
        .description("share of link lookups answered from memory since start")
        .register(registry);
  }

  public Optional<Link> get(String code) {
    return cache.get(code);
  }

  /** Forgets what is known of a code, after it was created or changed here. */
  public void invalidate(String code) {
    cache.invalidate(code);
  }
}
