package io.tally.redirect.stats;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Shares the read side's few database connections fairly. An API key runs at most {@code perKey}
 * stats requests at once; a few more may wait {@link #QUEUE_WAIT} for one of them to end (a
 * dashboard asks for a chart and its breakdowns together, each a few milliseconds), and the rest
 * are answered 429 at once. The heaviest queries (ranking links over more than {@value
 * StatsApi#HEAVY_TOP_DAYS} days, searching every link's URL) run at most {@code heavyAtOnce} at a
 * time whoever asks, and are never queued: a key that repeats them in parallel holds {@code perKey}
 * connections at most, and every other key's charts find one free. {@link StatsApi} keeps the
 * heaviest answers briefly, so that repeating one costs the database nothing.
 *
 * <p>Per process: N replicas admit N times as much, against a pool of their own each.
 */
public final class StatsAdmission {

  /** Stats requests one API key may have running at once, by default. */
  public static final int DEFAULT_PER_KEY = 2;

  /** How long a key's request waits for one of its running requests to end. */
  static final Duration QUEUE_WAIT = Duration.ofSeconds(1);

  /** A key's requests that may wait at once; more are refused without waiting. */
  static final int MAX_WAITING = 16;

  private final int perKey;
  private final Semaphore heavy;
  private final Map<String, KeySlots> keys = new ConcurrentHashMap<>();
  private final Counter refusedKey;
  private final Counter refusedHeavy;

  /** One key's running requests and those waiting for one of them. */
  private record KeySlots(Semaphore running, AtomicInteger waiting) {}

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

  /** What a request holds while it runs; closing it, once or more, lets the next one in. */
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
   * Admits one stats request of the API key {@code keyId}, waiting up to {@link #QUEUE_WAIT} when
   * the key has {@code perKey} running.
   *
   * @throws Busy when none of them ends in time, or too many of the key's requests already wait
   */
  public Slot admit(String keyId) {
    KeySlots slots =
        keys.computeIfAbsent(
            keyId, k -> new KeySlots(new Semaphore(perKey, true), new AtomicInteger()));
    if (!slots.running().tryAcquire()) {
      boolean admitted = false;
      if (slots.waiting().incrementAndGet() <= MAX_WAITING) {
        try {
          admitted = slots.running().tryAcquire(QUEUE_WAIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      slots.waiting().decrementAndGet();
      if (!admitted) {
        refusedKey.increment();
        throw new Busy(
            "this API key already has "
                + perKey
                + " stats requests running and more waiting; send the next when one is answered");
      }
    }
    return releasing(slots.running());
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
    return releasing(heavy);
  }

  private static Slot releasing(Semaphore permits) {
    AtomicBoolean released = new AtomicBoolean();
    return () -> {
      if (released.compareAndSet(false, true)) {
        permits.release();
      }
    };
  }
}
