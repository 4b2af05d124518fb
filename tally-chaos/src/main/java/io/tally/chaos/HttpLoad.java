package io.tally.chaos;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.IntFunction;
import java.util.function.Predicate;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

/**
 * HTTP requests at a steady rate, or back to back, on threads of their own until closed: the
 * answers are counted by status ({@code -1}: none within the request's timeout), their latencies
 * recorded, and those a scenario did not expect kept.
 */
final class HttpLoad implements AutoCloseable {

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
  private final List<String> unexpected = Collections.synchronizedList(new ArrayList<>());
  private final AtomicLong slowest = new AtomicLong();
  private final Recorder latencies = new Recorder(3);
  private final ExecutorService pool;
  private volatile boolean running = true;

  /**
   * Starts {@code perSecond} requests a second (0: each thread's next once its last is answered) on
   * {@code threads} threads, the {@code i}th being {@code request.apply(i)}; keeps the answers
   * {@code expected} refuses, and every failure to answer.
   */
  HttpLoad(
      int threads,
      int perSecond,
      IntFunction<HttpRequest> request,
      Predicate<HttpResponse<String>> expected) {
    pool = Executors.newFixedThreadPool(threads);
    long periodNanos = perSecond == 0 ? 0 : 1_000_000_000L * threads / perSecond;
    for (int t = 0; t < threads; t++) {
      int first = t;
      pool.submit(
          () -> {
            long next = System.nanoTime();
            for (int i = first; running; i += threads) {
              send(request.apply(i), expected);
              next += periodNanos;
              long wait = next - System.nanoTime();
              if (wait > 0) {
                TimeUnit.NANOSECONDS.sleep(wait);
              }
            }
            return null;
          });
    }
  }

  /**
   * Visitors following {@code codes} through redirect-web, as if through a trusted proxy: each
   * request carries one of {@link #CLIENT_ADDRESSES} in X-Forwarded-For, the address redirect-web
   * must hash and never write anywhere.
   */
  static HttpLoad visitors(int port, List<String> codes, int perSecond, int threads) {
    return new HttpLoad(
        threads,
        perSecond,
        i -> {
          SplittableRandom random = new SplittableRandom(i);
          return to(port, "/" + codes.get(random.nextInt(codes.size())))
              .header(
                  "X-Forwarded-For", CLIENT_ADDRESSES.get(random.nextInt(CLIENT_ADDRESSES.size())))
              .header("User-Agent", AGENTS[random.nextInt(AGENTS.length)])
              .build();
        },
        answer -> true);
  }

  /** A request for {@code path} on localhost's {@code port}, given up after 10 s. */
  static HttpRequest.Builder to(int port, String path) {
    return HttpRequest.newBuilder(URI.create("http://localhost:" + port + path))
        .timeout(Duration.ofSeconds(10));
  }

  private void send(HttpRequest request, Predicate<HttpResponse<String>> expected) {
    long start = System.nanoTime();
    int status = -1;
    try {
      HttpResponse<String> answer = http.send(request, HttpResponse.BodyHandlers.ofString());
      status = answer.statusCode();
      if (!expected.test(answer)) {
        unexpected.add(status + " " + answer.body());
      }
    } catch (Exception e) {
      unexpected.add(e.toString());
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

  /** The answers not expected and the failures to answer, so far. */
  List<String> unexpected() {
    return List.copyOf(unexpected);
  }

  /** The latencies of the requests answered since the last call (or the start). */
  Histogram latenciesSinceLastAsked() {
    return latencies.getIntervalHistogram();
  }

  Duration slowest() {
    return Duration.ofNanos(slowest.get());
  }

  /** Stops sending and waits for the requests in flight to be answered. */
  @Override
  public void close() throws InterruptedException {
    running = false;
    pool.shutdown();
    pool.awaitTermination(60, TimeUnit.SECONDS);
  }
}
