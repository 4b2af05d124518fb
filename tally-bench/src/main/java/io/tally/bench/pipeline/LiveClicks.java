package io.tally.bench.pipeline;

import io.tally.event.ClickEvent;
import io.tally.event.ClickRecords;
import io.tally.redirect.ClickPublisher;
import io.tally.redirect.RedirectWebConfig;
import io.tally.testing.ClickEvents;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;

/**
 * Clicks happening now, at a steady rate, with redirect-web's producer settings: what the click job
 * sees in normal operation. Each click is stamped with the wall clock when it is sent, and the
 * clicks of each minute are counted, so the time a minute's count takes to become complete in
 * PostgreSQL can be timed.
 */
final class LiveClicks implements AutoCloseable {

  static final String CODE_PREFIX = "live";

  private final Producer<String, byte[]> producer;
  private final String topic;
  private final int perSecond;
  private final int codes;
  private final SplittableRandom random;
  private final Map<Long, AtomicLong> perMinute = new ConcurrentHashMap<>();

  /** (wall-clock millis, clicks sent by then), every pacing step: when the n-th click left. */
  private final List<long[]> sentBy = Collections.synchronizedList(new ArrayList<>());

  private final Thread thread;
  private volatile boolean running = true;

  LiveClicks(String bootstrap, String topic, int perSecond, int codes, long seed) {
    this.producer =
        new KafkaProducer<>(
            ClickPublisher.producerProperties(
                bootstrap,
                8 * 1024 * 1024,
                Duration.ofSeconds(5),
                RedirectWebConfig.DEFAULT_KAFKA_DELIVERY_TIMEOUT));
    this.topic = topic;
    this.perSecond = perSecond;
    this.codes = codes;
    this.random = new SplittableRandom(seed);
    this.thread = new Thread(this::run, "bench-live-clicks");
    thread.setDaemon(true);
    thread.start();
  }

  static String code(int index) {
    return String.format(Locale.ROOT, "%s%04d", CODE_PREFIX, index);
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
            ClickEvents.minimal(
                new UUID(random.nextLong(), random.nextLong()),
                code(random.nextInt(codes)),
                ts,
                false);
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

  /** Clicks sent per minute (epoch millis of the minute's start). */
  Map<Long, AtomicLong> perMinute() {
    return perMinute;
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
