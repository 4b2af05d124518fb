package io.tally.bench.redirect;

import io.tally.bench.support.CpuMeter;
import io.tally.bench.support.Histograms;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLongArray;
import org.HdrHistogram.Histogram;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A closed-loop HTTP/1.1 load generator: N keep-alive connections, each sending a request, waiting for
 * its response and sending the next at once. Each response time goes into an HdrHistogram for the
 * current phase; phases let one run of load be cut into parts (measured, broker down, ...). Responses
 * before the first phase are warm-up and not recorded.
 *
 * <p>Closed loop means the offered load follows the server: the figures are the throughput at N
 * concurrent clients and the latency each client saw, not latency under a fixed arrival rate. For that,
 * {@link #startAtRate} runs the NIO client open loop at a fixed rate (see {@link NioLoad}).
 */
public final class LoadGenerator implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(LoadGenerator.class);
  private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
  static final int MAX_PHASES = 8;
  static final String USER_AGENT =
      "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36";

  /** How requests go over the wire. */
  public enum Client {
    /** One thread drives every connection through a selector (non-blocking sockets): the cheapest per request. */
    NIO,
    /** A thread per connection on a blocking socket: simple, but every response wakes a thread. */
    SOCKET,
    /** java.net.http.HttpClient over HTTP/1.1, a thread per connection: the most CPU per request. */
    HTTPCLIENT
  }

  /** What one phase measured. */
  record Result(long requests, long errors, double seconds, Histogram latency, double clientCpuSeconds) {
    double throughput() {
      return requests / seconds;
    }
  }

  /** What one load thread counted, per phase. */
  static final class Tally {
    final Histogram[] histograms = new Histogram[MAX_PHASES];
    final long[] requests = new long[MAX_PHASES];
    final long[] errors = new long[MAX_PHASES];
    final long[] cpuNanos = new long[MAX_PHASES];
    long redirects;
    private int current = -1;
    private long cpuMark = THREADS.getCurrentThreadCpuTime();

    Tally() {
      for (int p = 0; p < MAX_PHASES; p++) {
        histograms[p] = Histograms.newHistogram();
      }
    }

    /** Called on the load thread before each request: charges its CPU time to the phase it ran in. */
    void enter(int phase) {
      if (phase != current) {
        long now = THREADS.getCurrentThreadCpuTime();
        if (current >= 0) {
          cpuNanos[current] += now - cpuMark;
        }
        cpuMark = now;
        current = phase;
      }
    }

    void finish() {
      enter(-1);
    }

    void response(int phase, int status, long nanos) {
      if (status == 302) {
        redirects++;
      }
      if (phase >= 0) {
        Histograms.record(histograms[phase], nanos);
        requests[phase]++;
        if (status != 302) {
          errors[phase]++;
        }
      }
    }
  }

  private final List<Thread> threads = new ArrayList<>();
  private final List<Tally> tallies = new ArrayList<>();
  private final long[] phaseStart = new long[MAX_PHASES + 1];
  private final AtomicLongArray perSecond;
  final long startNanos = System.nanoTime();
  private volatile int phase = -1;
  private volatile boolean running = true;
  private int lastPhase = -1;

  private LoadGenerator(int port, Workload workload, int connections, long seed, Client client, int seconds, double rate)
      throws IOException {
    this.perSecond = seconds > 0 ? new AtomicLongArray(seconds) : null;
    SplittableRandom seeds = new SplittableRandom(seed);
    if (client == Client.NIO) {
      Tally tally = new Tally();
      NioLoad nio = new NioLoad(this, tally, port, workload, connections, seeds.split(), rate);
      tallies.add(tally);
      threads.add(new Thread(nio::run, CpuMeter.LOAD_THREAD_PREFIX + "nio"));
    } else {
      HttpClient httpClient = client == Client.HTTPCLIENT
          ? HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).followRedirects(HttpClient.Redirect.NEVER)
              .connectTimeout(Duration.ofSeconds(5)).build()
          : null;
      for (int i = 0; i < connections; i++) {
        Tally tally = new Tally();
        BlockingLoad worker = new BlockingLoad(tally, port, workload, seeds.split(), httpClient);
        tallies.add(tally);
        threads.add(new Thread(worker::run, CpuMeter.LOAD_THREAD_PREFIX + i));
      }
    }
    for (Thread t : threads) {
      t.setDaemon(true);
      t.start();
    }
  }

  /**
   * Starts {@code connections} clients against {@code localhost:port}, in the warm-up phase (not
   * recorded). {@code trackSeconds} > 0 also counts responses per wall-clock second for that long.
   */
  static LoadGenerator start(int port, Workload workload, int connections, long seed, Client client, int trackSeconds)
      throws IOException {
    return new LoadGenerator(port, workload, connections, seed, client, trackSeconds, 0);
  }

  /**
   * Starts {@code connections} NIO clients that together send {@code ratePerSecond} requests a second
   * whatever the server does (open loop), each latency counted from when its request was due.
   */
  static LoadGenerator startAtRate(int port, Workload workload, int connections, long seed, double ratePerSecond)
      throws IOException {
    return new LoadGenerator(port, workload, connections, seed, Client.NIO, 0, ratePerSecond);
  }

  /** Records from now on into phase {@code p}: 0 first, then 1, 2, ... up to MAX_PHASES-1. */
  void phase(int p) {
    if (p != lastPhase + 1 || p >= MAX_PHASES) {
      throw new IllegalArgumentException("phase " + p + " after " + lastPhase);
    }
    phaseStart[p] = System.nanoTime();
    lastPhase = p;
    phase = p;
  }

  int currentPhase() {
    return phase;
  }

  boolean running() {
    return running;
  }

  void countSecond(long endNanos) {
    if (perSecond != null) {
      int second = (int) ((endNanos - startNanos) / 1_000_000_000L);
      if (second < perSecond.length()) {
        perSecond.incrementAndGet(second);
      }
    }
  }

  /** Stops every client and returns each phase's figures, 0 .. last phase. */
  List<Result> stop() {
    long end = System.nanoTime();
    phaseStart[lastPhase + 1] = end;
    phase = -1;
    running = false;
    for (Thread t : threads) {
      try {
        t.join(120_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    List<Result> results = new ArrayList<>();
    for (int p = 0; p <= lastPhase; p++) {
      Histogram merged = Histograms.newHistogram();
      long requests = 0;
      long errors = 0;
      double cpu = 0;
      for (Tally t : tallies) {
        merged.add(t.histograms[p]);
        requests += t.requests[p];
        errors += t.errors[p];
        cpu += t.cpuNanos[p] / 1e9;
      }
      results.add(new Result(requests, errors, (phaseStart[p + 1] - phaseStart[p]) / 1e9, merged, cpu));
    }
    return results;
  }

  /** Responses per second since the start, for as many seconds as were tracked. */
  long[] perSecond() {
    if (perSecond == null) {
      return new long[0];
    }
    long[] counts = new long[perSecond.length()];
    for (int i = 0; i < counts.length; i++) {
      counts[i] = perSecond.get(i);
    }
    return counts;
  }

  /** Every 302 answered, warm-up included; read after {@link #stop()}. */
  long totalRedirects() {
    return tallies.stream().mapToLong(t -> t.redirects).sum();
  }

  @Override
  public void close() {
    if (running) {
      stop();
    }
  }

  /** One connection on its own thread, over a blocking socket or java.net.http. */
  private final class BlockingLoad {
    private final Tally tally;
    private final int port;
    private final Workload workload;
    private final SplittableRandom random;
    private final HttpClient httpClient;
    private final byte[][] rawRequests;
    private final HttpRequest[] requestsByCode;

    BlockingLoad(Tally tally, int port, Workload workload, SplittableRandom random, HttpClient httpClient) {
      this.tally = tally;
      this.port = port;
      this.workload = workload;
      this.random = random;
      this.httpClient = httpClient;
      List<String> codes = workload.codes();
      rawRequests = new byte[codes.size()][];
      requestsByCode = new HttpRequest[codes.size()];
      for (int i = 0; i < codes.size(); i++) {
        if (httpClient == null) {
          rawRequests[i] = HttpConnection.get("/" + codes.get(i), "localhost:" + port, USER_AGENT);
        } else {
          requestsByCode[i] = HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/" + codes.get(i)))
              .header("User-Agent", USER_AGENT).GET().build();
        }
      }
    }

    void run() {
      HttpConnection connection = null;
      try {
        while (running) {
          int p = phase;
          tally.enter(p);
          int code = workload.next(random);
          long start = System.nanoTime();
          int status;
          try {
            if (connection == null && httpClient == null) {
              connection = new HttpConnection("localhost", port);
            }
            status = httpClient == null
                ? connection.exchange(rawRequests[code])
                : httpClient.send(requestsByCode[code], HttpResponse.BodyHandlers.discarding()).statusCode();
          } catch (IOException e) {
            status = -1;
            LOG.debug("request failed", e);
            if (connection != null) {
              connection.close();
              connection = null;
            }
          }
          long end = System.nanoTime();
          tally.response(p, status, end - start);
          countSecond(end);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } finally {
        tally.finish();
        if (connection != null) {
          connection.close();
        }
      }
    }
  }
}
