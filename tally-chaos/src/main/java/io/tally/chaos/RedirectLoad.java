package io.tally.chaos;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

/**
 * Redirects at a steady rate through redirect-web over HTTP, as if through a trusted proxy: each
 * request carries one of {@link #CLIENT_ADDRESSES} in X-Forwarded-For, the address redirect-web
 * must hash and never write anywhere. Counts the answers by status ({@code -1}: no answer within
 * the timeout).
 */
final class RedirectLoad implements AutoCloseable {

  /**
   * Client addresses from the documentation ranges (RFC 5737, RFC 3849): only ever header text,
   * never a destination, and easy to recognise if one leaks into a topic, a table or a log.
   */
  static final List<String> CLIENT_ADDRESSES =
      List.of(
          "192.0.2.17",
          "198.51.100.23",
          "203.0.113.42",
          "203.0.113.199",
          "2001:db8::7",
          "2001:db8:1234::beef");

  private static final String[] AGENTS = {
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko)"
        + " Chrome/131.0.0.0 Safari/537.36",
    "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like"
        + " Gecko) Version/18.1 Mobile/15E148 Safari/604.1",
    "curl/8.5.0",
  };

  private final HttpClient http =
      HttpClient.newBuilder()
          .followRedirects(HttpClient.Redirect.NEVER)
          .connectTimeout(Duration.ofSeconds(5))
          .build();
  private final Map<Integer, LongAdder> byStatus = new ConcurrentHashMap<>();
  private final AtomicBoolean running = new AtomicBoolean(true);
  private final AtomicLong slowest = new AtomicLong();
  private final Recorder latencies = new Recorder(3);
  private final ExecutorService threads;

  /**
   * Starts {@code perSecond} redirects a second spread over {@code codes}, on {@code workers}
   * threads.
   */
  RedirectLoad(int port, List<String> codes, int perSecond, int workers) {
    threads = Executors.newFixedThreadPool(workers);
    long periodNanos = 1_000_000_000L * workers / perSecond;
    for (int w = 0; w < workers; w++) {
      SplittableRandom random = new SplittableRandom(w);
      threads.submit(
          () -> {
            long next = System.nanoTime();
            while (running.get()) {
              next += periodNanos;
              one(port, codes.get(random.nextInt(codes.size())), random);
              long wait = next - System.nanoTime();
              if (wait > 0) {
                TimeUnit.NANOSECONDS.sleep(wait);
              }
            }
            return null;
          });
    }
  }

  private void one(int port, String code, SplittableRandom random) {
    HttpRequest request =
        HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/" + code))
            .timeout(Duration.ofSeconds(10))
            .header(
                "X-Forwarded-For", CLIENT_ADDRESSES.get(random.nextInt(CLIENT_ADDRESSES.size())))
            .header("User-Agent", AGENTS[random.nextInt(AGENTS.length)])
            .GET()
            .build();
    long start = System.nanoTime();
    int status;
    try {
      status = http.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
    } catch (Exception e) {
      status = -1;
    }
    long nanos = System.nanoTime() - start;
    slowest.accumulateAndGet(nanos, Math::max);
    latencies.recordValue(nanos);
    byStatus.computeIfAbsent(status, s -> new LongAdder()).increment();
  }

  /** Answers by status so far. */
  Map<Integer, Long> byStatus() {
    Map<Integer, Long> counts = new TreeMap<>();
    byStatus.forEach((status, n) -> counts.put(status, n.sum()));
    return counts;
  }

  long total() {
    return byStatus.values().stream().mapToLong(LongAdder::sum).sum();
  }

  /** The latencies of the redirects answered since the last call (or the start). */
  Histogram latenciesSinceLastAsked() {
    return latencies.getIntervalHistogram();
  }

  Duration slowest() {
    return Duration.ofNanos(slowest.get());
  }

  /** Stops sending and waits for the requests in flight to be answered. */
  @Override
  public void close() throws InterruptedException {
    running.set(false);
    threads.shutdown();
    threads.awaitTermination(30, TimeUnit.SECONDS);
  }
}
