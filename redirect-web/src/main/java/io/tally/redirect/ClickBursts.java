package io.tally.redirect;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.github.bucket4j.Bucket;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.function.Function;

/**
 * Tells a click that is part of a burst: one client address following one link faster than a person
 * does ({@code TALLY_BURST_CLICKS_PER_MINUTE}, default {@value #DEFAULT_PER_MINUTE}). Each (client,
 * link) has a token bucket of a minute's clicks that refills at that rate: a person, or a household
 * or office behind one address, spends a few; a script that follows a link in a loop runs it dry,
 * and every click past it is marked on its event and counted as a bot's of kind {@code burst}, not
 * as a person's or a unique visitor. Nothing is refused: the redirect answers as always and every
 * click is counted, as what it is.
 *
 * <p>Decided here because only redirect-web knows the address; the event carries the verdict, so
 * the click job and a recount read the same. The buckets live in this process, never in Redis: a
 * redirect waits on nothing. So N replicas behind a balancer that spreads one client over them
 * allow N times the rate; a balancer with client affinity keeps it exact. At most {@value
 * #MAX_CLIENTS} (client, link) pairs are followed at once, the least recent forgotten first.
 */
public final class ClickBursts {

  /**
   * Clicks per minute on one link from one client address that still count as people's: more than
   * anyone follows one link, and room for a few people behind one NAT.
   */
  public static final int DEFAULT_PER_MINUTE = 60;

  static final long MAX_CLIENTS = 100_000;

  private static final Duration WINDOW = Duration.ofMinutes(1);

  private final int perMinute;
  private final int ipv6Prefix;
  private final Cache<ClientOnLink, Bucket> buckets;
  private final Function<ClientOnLink, Bucket> newBucket;
  private final Counter marked;

  /**
   * @param perMinute clicks per minute on one link from one client before a burst; 0 marks none
   * @param ipv6Prefix how many leading bits of an IPv6 address make one client ({@link
   *     RateLimits#addressKey})
   */
  public ClickBursts(int perMinute, int ipv6Prefix, MeterRegistry registry) {
    if (perMinute < 0) {
      throw new IllegalArgumentException("perMinute must be 0 (off) or more, not " + perMinute);
    }
    this.perMinute = perMinute;
    this.ipv6Prefix = ipv6Prefix;
    // A bucket idle for a window is full again, as good as none.
    this.buckets = Caffeine.newBuilder().maximumSize(MAX_CLIENTS).expireAfterAccess(WINDOW).build();
    this.newBucket =
        client ->
            Bucket.builder()
                .addLimit(limit -> limit.capacity(perMinute).refillGreedy(perMinute, WINDOW))
                .build();
    this.marked =
        Counter.builder("tally.clicks.burst")
            .description(
                "clicks marked as part of a burst: one client address following one link faster"
                    + " than TALLY_BURST_CLICKS_PER_MINUTE; counted as bot clicks of kind burst")
            .register(registry);
  }

  /** Marks no click; for tests of what a click event carries otherwise. */
  public static ClickBursts off(MeterRegistry registry) {
    return new ClickBursts(0, RateLimits.DEFAULT_IPV6_CLIENT_PREFIX, registry);
  }

  /**
   * Takes one click of {@code address} on {@code code}; true when it is past the rate, a burst's.
   */
  public boolean isBurst(String address, String code) {
    if (perMinute == 0 || address.isEmpty()) {
      return false;
    }
    Bucket bucket =
        buckets.get(new ClientOnLink(RateLimits.addressKey(address, ipv6Prefix), code), newBucket);
    if (bucket.tryConsume(1)) {
      return false;
    }
    marked.increment();
    return true;
  }

  private record ClientOnLink(String client, String code) {}
}
