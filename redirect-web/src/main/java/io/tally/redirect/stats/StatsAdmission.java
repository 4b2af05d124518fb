package io.tally.redirect.stats;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Shares the read side's few database connections fairly: an API key may run at most {@code perKey}
 * stats requests at once, and at most {@code heavyAtOnce} of the heaviest queries (ranking links
 * over more than {@value StatsApi#HEAVY_TOP_DAYS} days, searching every link's URL) run at once
 * whoever asks. What is over either is answered 429 at once, never queued: a key that repeats the
 * heaviest queries in parallel holds a few connections and one core of PostgreSQL at most, and
 * every other key's charts find a connection free. {@link StatsApi} keeps the heaviest answers
 * briefly, so that repeating one costs the database nothing.
 *
 * <p>Per process: N replicas admit N times as much, against a pool of their own each.
 */
public final class StatsAdmission {

  /** Stats requests one API key may have running at once, by default. */
  public static final int DEFAULT_PER_KEY = 2;

  private final int perKey;
  private final Semaphore heavy;
  private final Map<String, AtomicInteger> running = new ConcurrentHashMap<>();
  private final Counter refusedKey;
  private final Counter refusedHeavy;

  /**
   * @param perKey stats requests one API key may have running at once
   * @param heavyAtOnce heaviest queries that may run at once, all keys together
   */
  public StatsAdmission(int perKey, int heavyAtOnce, MeterRegistry registry) {
    if (perKey < 1 || heavyAtOnce < 1) {
      throw new IllegalArgumentException(
          "perKey and heavyAtOnce must be at least 1, not " + perKey + " and " + heavyAtOnce);
    }
    this.perKey = perKey;
    this.heavy = new Semaphore(heavyAtOnce);
    this.refusedKey = refusedCounter("stats-concurrency", registry);
    this.refusedHeavy = refusedCounter("heavy-stats", registry);
  }

  private static Counter refusedCounter(String limit, MeterRegistry registry) {
    return Counter.builder("tally.rate.limited")
        .description("requests refused with 429 because their client was over a limit")
        .tag("limit", limit)
        .register(registry);
  }

  /** What a request holds while it runs; closing it lets the next one in. */
  @FunctionalInterface
  public interface Slot extends AutoCloseable {
    @Override
    void close();
  }

  /** A request refused because its key, or everyone's heaviest queries, are at their limit. */
  public static final class Busy extends RuntimeException {
    Busy(String message) {
      super(message, null, false, false);
    }
  }

  /**
   * Admits one stats request of the API key {@code keyId}.
   *
   * @throws Busy when the key already has {@code perKey} requests running
   */
  public Slot admit(String keyId) {
    AtomicInteger count = running.computeIfAbsent(keyId, k -> new AtomicInteger());
    if (count.incrementAndGet() > perKey) {
      count.decrementAndGet();
      refusedKey.increment();
      throw new Busy(
          "this API key already has "
              + perKey
              + " stats requests running; send the next when one is answered");
    }
    return count::decrementAndGet;
  }

  /**
   * Admits one of the heaviest queries.
   *
   * @throws Busy when as many are running as may
   */
  public Slot admitHeavy() {
    if (!heavy.tryAcquire()) {
      refusedHeavy.increment();
      throw new Busy(
          "the heaviest stats queries (top links over more than "
              + StatsApi.HEAVY_TOP_DAYS
              + " days, link searches) are all running; retry in a moment or ask for less");
    }
    return heavy::release;
  }
}
