package io.tally.bench.pipeline;

import io.tally.bench.support.Histograms;
import io.tally.event.ClickEvent;
import io.tally.event.ClickIds;
import io.tally.event.ClickRecords;
import io.tally.local.LocalServices;
import io.tally.redirect.ClickPublisher;
import io.tally.redirect.RedirectWebConfig;
import io.tally.testing.ClickEvents;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.HdrHistogram.Histogram;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;

/**
 * Clicks happening now, at a steady rate, with redirect-web's producer settings: what the click job
 * sees in normal operation. Each click is stamped with the wall clock when it is sent, and the
 * clicks of each minute are counted, so the time a minute's count, and a click, take to become
 * visible in PostgreSQL can be timed.
 */
final class LiveClicks implements AutoCloseable {

  static final String CODE_PREFIX = "live";

  private final Producer<String, byte[]> producer;
  private final String topic;
  private final String codePrefix;
  private final int perSecond;
  private final int codes;
  private final SplittableRandom random;
  private final Map<Long, AtomicLong> perMinute = new ConcurrentHashMap<>();

  /** (wall-clock millis, clicks sent by then), every pacing step: when the n-th click left. */
  private final List<long[]> sentBy = Collections.synchronizedList(new ArrayList<>());

  private final Thread thread;
  private volatile boolean running = true;

  LiveClicks(String bootstrap, String topic, int perSecond, int codes, long seed) {
    this(bootstrap, topic, perSecond, codes, seed, CODE_PREFIX);
  }

  /**
   * Clicks on links whose codes start with {@code codePrefix}: a prefix of its own keeps one run's
   * live clicks apart from those an earlier run left on the topic.
   */
  LiveClicks(
      String bootstrap, String topic, int perSecond, int codes, long seed, String codePrefix) {
    this.producer =
        new KafkaProducer<>(
            ClickPublisher.producerProperties(
                bootstrap,
                8 * 1024 * 1024,
                Duration.ofSeconds(5),
                RedirectWebConfig.DEFAULT_KAFKA_DELIVERY_TIMEOUT));
    this.topic = topic;
    this.codePrefix = codePrefix;
    this.perSecond = perSecond;
    this.codes = codes;
    this.random = new SplittableRandom(seed);
    this.thread = new Thread(this::run, "bench-live-clicks");
    thread.setDaemon(true);
    thread.start();
  }

  private String code(int index) {
    return String.format(Locale.ROOT, "%s%04d", codePrefix, index);
  }

  private void run() {
    long start = System.nanoTime();
    long sent = 0;
    while (running) {
      // Paced in 10 ms steps: as many clicks as the rate allows by now.
      long due = (System.nanoTime() - start) * perSecond / 1_000_000_000L;
      while (sent < due) {
        long ts = System.currentTimeMillis();
        // Uniform over the live codes, so every partition is busy and no watermark waits on an idle
        // one.
        ClickEvent event =
            ClickEvents.minimal(ClickIds.next(), code(random.nextInt(codes)), ts, false);
        producer.send(ClickRecords.of(topic, event));
        perMinute.computeIfAbsent(ts - ts % 60_000, m -> new AtomicLong()).incrementAndGet();
        sent++;
      }
      sentBy.add(new long[] {System.currentTimeMillis(), sent});
      try {
        Thread.sleep(10);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }

  /** When the clicks left: (wall-clock millis, clicks sent by then), in order. */
  List<long[]> sentBy() {
    synchronized (sentBy) {
      return new ArrayList<>(sentBy);
    }
  }

  /** Clicks sent so far. */
  long sent() {
    return perMinute.values().stream().mapToLong(AtomicLong::get).sum();
  }

  /**
   * What the live phase measured.
   *
   * @param lags per minute that ended while watched, seconds from its end until its count was
   *     complete
   * @param clickToVisible click-to-visible latencies, in nanoseconds
   * @param startedAt when the measuring began, epoch millis
   * @param slowestSentAt when the clicks that waited longest left, epoch millis
   * @param slowestMillis how long they waited
   */
  record Latency(
      Map<Long, Double> lags,
      Histogram clickToVisible,
      long startedAt,
      long slowestSentAt,
      long slowestMillis) {}

  /**
   * Polls the live codes' counts for {@code duration}; returns, per minute that ended meanwhile,
   * the seconds from its end until its count in PostgreSQL was complete.
   */
  Latency measureLatency(LocalServices stack, Duration duration) throws Exception {
    Map<Long, Double> lags = new TreeMap<>();
    long startedAt = System.currentTimeMillis();
    long end = startedAt + duration.toMillis();
    List<long[]> visible = new ArrayList<>();
    try (Connection c = stack.connect();
        Statement s = c.createStatement()) {
      while (System.currentTimeMillis() < end) {
        try (ResultSet rs =
            s.executeQuery(
                "SELECT (extract(epoch from minute) * 1000)::bigint, sum(clicks + bot_clicks)"
                    + " FROM click_counts WHERE code LIKE '"
                    + codePrefix
                    + "%' GROUP BY minute")) {
          long now = System.currentTimeMillis();
          long total = 0;
          while (rs.next()) {
            total += rs.getLong(2);
            long minute = rs.getLong(1);
            AtomicLong sent = perMinute.get(minute);
            // Only minutes that end while watched: an earlier one's completion time is not known.
            if (minute + 60_000 >= startedAt
                && sent != null
                && rs.getLong(2) == sent.get()
                && minute + 60_000 <= now
                && !lags.containsKey(minute)) {
              lags.put(minute, (now - (minute + 60_000)) / 1000.0);
            }
          }
          visible.add(new long[] {now, total});
        }
        Thread.sleep(100);
      }
    }
    long[] slowest = new long[2];
    Histogram clickToVisible =
        clickToVisible(
            sentBy(), visible, startedAt, end - CLICK_TO_VISIBLE_MARGIN.toMillis(), slowest);
    return new Latency(lags, clickToVisible, startedAt, slowest[0], slowest[1]);
  }

  /**
   * Nothing sent in the last this-long of the live phase is timed: it may not have had time to
   * show.
   */
  private static final Duration CLICK_TO_VISIBLE_MARGIN = Duration.ofSeconds(15);

  /**
   * For each moment clicks left, how long until PostgreSQL held that many live clicks: the time
   * from a click to its count being readable by the stats API, with the job's early firings. Counts
   * grow in the order clicks were sent only roughly (partitions run independently), so this is the
   * time until as many clicks as had been sent are visible.
   */
  private static Histogram clickToVisible(
      List<long[]> sentBy, List<long[]> visible, long from, long until, long[] slowest) {
    Histogram histogram = Histograms.newHistogram();
    int v = 0;
    for (long[] sent : sentBy) {
      if (sent[0] < from || sent[0] > until || sent[1] == 0) {
        continue;
      }
      while (v < visible.size() && (visible.get(v)[0] < sent[0] || visible.get(v)[1] < sent[1])) {
        v++;
      }
      if (v == visible.size()) {
        break;
      }
      long waited = visible.get(v)[0] - sent[0];
      Histograms.record(histogram, TimeUnit.MILLISECONDS.toNanos(waited));
      if (waited > slowest[1]) {
        slowest[0] = sent[0];
        slowest[1] = waited;
      }
    }
    return histogram;
  }

  @Override
  public void close() {
    running = false;
    try {
      thread.join(5_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    producer.close(Duration.ofSeconds(10));
  }
}
