package io.tally.redirect.links;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.CacheLoader;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.LoadingCache;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.cache.CaffeineCacheMetrics;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Link lookups for the redirect path, served from memory in front of PostgreSQL, so that redirects
 * to known links keep answering while PostgreSQL is slow or unreachable.
 *
 * <p>A link read more than the refresh interval ago is still served at once, and read again in the
 * background; a refresh that fails keeps the link as it was, and the next request tries again. A
 * link is served from memory for at most the stale limit after it was last read from PostgreSQL,
 * then it must be read again, and answers 503 while that cannot be done. Consequences: a change
 * made through another instance (a disabled link) is seen here within the refresh interval while
 * the link is clicked, after one more redirect when it was not clicked for longer; during an
 * outage, as of the last successful read. With {@link KnownCodes} listening, a change is seen at
 * once instead ({@link #changedElsewhere}).
 *
 * <p>Links are held up to a number of bytes, not of links: a link's URL may be 2,048 characters, so
 * a count that suits short URLs would let long ones fill the heap. The bound is a quarter of the
 * heap by default, and the least recently used links make way.
 *
 * <p>Unknown codes are remembered in a cache of their own, smaller and for {@link #NEGATIVE_TTL},
 * so a flood of random codes costs one query per distinct code per minute instead of one per
 * request, and cannot push real links out of memory; with {@link KnownCodes} current, only the rare
 * code the Bloom filter cannot rule out gets this far. A link created or disabled through this
 * process invalidates its entry at once.
 */
public final class LinkCache implements AutoCloseable {

  static final Duration NEGATIVE_TTL = Duration.ofSeconds(60);
  static final long MAX_UNKNOWN_CODES = 100_000;

  /**
   * What a cached link is taken to cost besides its characters: Caffeine's entry, the record, its
   * two instants and the strings' headers, rounded up.
   */
  static final int ENTRY_OVERHEAD_BYTES = 240;

  /**
   * Refreshes wait here while PostgreSQL is slow; beyond this many, a due link is tried on a later
   * request.
   */
  private static final int MAX_QUEUED_REFRESHES = 10_000;

  private final LinkStore store;
  private final LoadingCache<String, Link> links;
  private final Cache<String, Boolean> unknownCodes;
  private final ThreadPoolExecutor refreshes;
  private final Counter refreshFailures;
  private final Counter databaseLookups;

  /**
   * @param refreshAfter how old a link may be before a request for it has it read again in the
   *     background
   * @param staleLimit how long after its last successful read a link is still served
   */
  public LinkCache(
      LinkStore store, MeterRegistry registry, Duration refreshAfter, Duration staleLimit) {
    this(
        store,
        registry,
        refreshAfter,
        staleLimit,
        Runtime.getRuntime().maxMemory() / 4,
        MAX_UNKNOWN_CODES,
        ForkJoinPool.commonPool());
  }

  /**
   * @param maxLinkBytes how many bytes the cached links may take ({@link #bytesOf})
   * @param maintenance where the caches evict and expire entries: Caffeine's own default in
   *     production; a test passes {@code Runnable::run} so that a write returns with its evictions
   *     done
   */
  LinkCache(
      LinkStore store,
      MeterRegistry registry,
      Duration refreshAfter,
      Duration staleLimit,
      long maxLinkBytes,
      long maxUnknownCodes,
      Executor maintenance) {
    this.store = store;
    // Two threads: a refresh is one indexed read, and while PostgreSQL hangs more threads would
    // only hang too.
    this.refreshes =
        new ThreadPoolExecutor(
            2,
            2,
            0,
            TimeUnit.SECONDS,
            new ArrayBlockingQueue<>(MAX_QUEUED_REFRESHES),
            r -> {
              Thread t = new Thread(r, "link-refresh");
              t.setDaemon(true);
              return t;
            });
    this.unknownCodes =
        Caffeine.newBuilder()
            .executor(maintenance)
            .maximumSize(maxUnknownCodes)
            .expireAfterWrite(NEGATIVE_TTL)
            .build();
    this.links =
        Caffeine.newBuilder()
            .executor(maintenance)
            .maximumWeight(maxLinkBytes)
            .<String, Link>weigher(LinkCache::bytesOf)
            .refreshAfterWrite(refreshAfter)
            .expireAfterWrite(staleLimit)
            .recordStats()
            .build(new Loader());
    this.refreshFailures =
        Counter.builder("tally.link.cache.refresh.failures")
            .description(
                "background reads of a cached link that failed; the link is served as it was")
            .register(registry);
    this.databaseLookups =
        Counter.builder("tally.link.database.lookups")
            .description("links looked up in PostgreSQL, on a request or a background refresh")
            .register(registry);
    CaffeineCacheMetrics.monitor(registry, links, "links");
    Gauge.builder("tally.link.cache.hit.ratio", links, c -> c.stats().hitRate())
        .description(
            "share of lookups of codes not known to be unknown answered from memory since start")
        .register(registry);
    Gauge.builder("tally.link.cache.bytes", this, LinkCache::bytesHeld)
        .description("what the cached links are taken to hold in memory, bytes")
        .baseUnit("bytes")
        .register(registry);
    Gauge.builder("tally.link.cache.unknown.codes", unknownCodes, Cache::estimatedSize)
        .description("codes remembered as having no link")
        .register(registry);
  }

  /**
   * The link with this code, or empty when there is none.
   *
   * @throws LinkStore.StoreException when the code is in neither cache and PostgreSQL cannot say
   */
  public Optional<Link> get(String code) {
    if (unknownCodes.getIfPresent(code) != null) {
      return Optional.empty();
    }
    return Optional.ofNullable(links.get(code));
  }

  /** Whether this code is in memory, as a link or as known to have none: no lookup would run. */
  public boolean inMemory(String code) {
    return unknownCodes.getIfPresent(code) != null || links.asMap().containsKey(code);
  }

  /** Whether any link is in memory, so that some redirects can be answered without PostgreSQL. */
  public boolean holdsLinks() {
    return links.estimatedSize() > 0;
  }

  /** Forgets what is known of a code, after it was created or changed here. */
  public void invalidate(String code) {
    // In this order: a load in flight for the code finishes (and may remember it as unknown) before
    // the links entry is dropped, so the unknown mark it left is dropped after it.
    links.invalidate(code);
    unknownCodes.invalidate(code);
  }

  /**
   * Takes note of a code changed in PostgreSQL by any instance: it is no longer remembered as
   * unknown, and a link held in memory is read again in the background, served as it was until
   * then.
   */
  public void changedElsewhere(String code) {
    unknownCodes.invalidate(code);
    if (links.asMap().containsKey(code)) {
      links.refresh(code);
    }
  }

  /**
   * What a cached link is taken to hold: its code, URL and tags at two bytes a character, as the
   * worst a string stores, and {@link #ENTRY_OVERHEAD_BYTES}.
   */
  static int bytesOf(String code, Link link) {
    int tagChars = link.tags().stream().mapToInt(String::length).sum();
    return ENTRY_OVERHEAD_BYTES
        + 2 * (code.length() + link.code().length() + link.url().length() + tagChars);
  }

  /** What the cached links are taken to hold now ({@link #bytesOf}). */
  long bytesHeld() {
    return links.policy().eviction().map(e -> e.weightedSize().orElse(0)).orElse(0L);
  }

  @Override
  public void close() {
    refreshes.shutdownNow();
  }

  /**
   * Reads links, remembering codes without one. Returning null keeps nothing in {@link #links}, and
   * a refresh that finds nothing drops the entry.
   */
  private final class Loader implements CacheLoader<String, Link> {

    @Override
    public Link load(String code) {
      databaseLookups.increment();
      Optional<Link> link = store.find(code);
      if (link.isEmpty()) {
        unknownCodes.put(code, Boolean.TRUE);
      }
      return link.orElse(null);
    }

    @Override
    public CompletableFuture<Link> asyncReload(String code, Link old, Executor ignored) {
      CompletableFuture<Link> reloaded = new CompletableFuture<>();
      try {
        refreshes.execute(
            () -> {
              try {
                reloaded.complete(load(code));
              } catch (RuntimeException e) {
                refreshFailures.increment();
                reloaded.completeExceptionally(new RefreshFailed(e));
              }
            });
      } catch (RejectedExecutionException e) {
        refreshFailures.increment();
        reloaded.completeExceptionally(new RefreshFailed(e));
      }
      return reloaded;
    }
  }

  /**
   * A refresh that did not reach PostgreSQL in time. A {@link TimeoutException} because Caffeine
   * logs every other failed refresh with its stack trace: during an outage that is a trace per link
   * per request, while {@code tally.link.cache.refresh.failures} counts them.
   */
  private static final class RefreshFailed extends TimeoutException {
    RefreshFailed(Exception cause) {
      super(cause.getMessage());
      initCause(cause);
    }
  }
}
