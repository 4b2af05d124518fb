package io.tally.bench.redirect;

import static io.tally.testing.Table.fmt;

import io.tally.bench.support.Columns;
import io.tally.bench.support.CpuMeter;
import io.tally.bench.support.Histograms;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.stream.IntStream;
import org.HdrHistogram.Histogram;

/**
 * An HTTP/1.1 load generator: N keep-alive connections driven by one thread ({@link NioLoad}).
 * Closed loop ({@link #start}), each connection sends its next request as soon as the previous
 * response is in; open loop ({@link #startAtRate}), requests fall due at a fixed rate whatever the
 * server does. Each response time goes into an HdrHistogram for the current phase; phases let one
 * run of load be cut into parts (measured, broker down, ...). Responses before the first phase are
 * warm-up and not recorded.
 *
 * <p>Closed loop means the offered load follows the server: the figures are the throughput at N
 * concurrent clients and the latency each client saw, not latency under a fixed arrival rate.
 */
public final class LoadGenerator implements AutoCloseable {

  private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
  static final int MAX_PHASES = 8;
  static final String USER_AGENT =
      "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko)"
          + " Chrome/124.0.0.0 Safari/537.36";

  /** What one phase measured. */
  record Result(
      long requests, long errors, double seconds, Histogram latency, double clientCpuSeconds) {
    double throughput() {
      return requests / seconds;
    }

    /** The latency at {@code percentile} (0–100), in milliseconds. */
    double ms(double percentile) {
      return Histograms.ms(latency, percentile);
    }
  }

  /** A phase's latency and errors, the columns every redirect table prints. */
  static final Columns<Result> LATENCY =
      new Columns<Result>()
          .and("p50 ms", r -> fmt(r.ms(50), 2))
          .and("p99 ms", r -> fmt(r.ms(99), 2))
          .and("p99.9 ms", r -> fmt(r.ms(99.9), 2))
          .and("max ms", r -> fmt(Histograms.maxMs(r.latency()), 1))
          .and("errors", Result::errors);

  /** What the load thread counted, per phase. */
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

    /**
     * Called on the load thread before each request: charges its CPU time to the phase it ran in.
     */
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

  private final Tally tally = new Tally();
  private final Thread thread;
  private final long[] phaseStart = new long[MAX_PHASES + 1];
  private final AtomicLongArray perSecond;
  final long startNanos = System.nanoTime();
  private volatile int phase = -1;
  private volatile boolean running = true;

  /** Why the load thread ended before it was stopped, if it did. */
  private volatile Exception failure;

  private int lastPhase = -1;

  private LoadGenerator(
      int port, Workload workload, int connections, long seed, int seconds, double rate)
      throws IOException {
    this.perSecond = new AtomicLongArray(Math.max(0, seconds));
    // split(), as when each client had its own stream: the same seed asks for the same links as
    // before.
    NioLoad nio =
        new NioLoad(
            this, tally, port, workload, connections, new SplittableRandom(seed).split(), rate);
    thread = new Thread(nio::run, CpuMeter.LOAD_THREAD_PREFIX + "nio");
    thread.setDaemon(true);
    thread.start();
  }

  /**
   * Starts {@code connections} clients against {@code localhost:port}, in the warm-up phase (not
   * recorded). {@code trackSeconds} > 0 also counts responses per wall-clock second for that long.
   */
  static LoadGenerator start(
      int port, Workload workload, int connections, long seed, int trackSeconds)
      throws IOException {
    return new LoadGenerator(port, workload, connections, seed, trackSeconds, 0);
  }

  /**
   * Starts {@code connections} NIO clients that together send {@code ratePerSecond} requests a
   * second whatever the server does (open loop), each latency counted from when its request was
   * due.
   */
  static LoadGenerator startAtRate(
      int port, Workload workload, int connections, long seed, double ratePerSecond)
      throws IOException {
    return new LoadGenerator(port, workload, connections, seed, 0, ratePerSecond);
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

  /**
   * The phase that was current at {@code nanos} ({@link System#nanoTime()}), -1 for warm-up: at a
   * fixed rate a request belongs to the phase it was due in, not the one it could be sent in, or a
   * backlog left by the warm-up would be counted, with its waits, in the measured phase.
   */
  int phaseAt(long nanos) {
    // Reading the volatile phase first makes every phaseStart written before it visible.
    for (int p = phase; p >= 0; p--) {
      if (phaseStart[p] - nanos <= 0) {
        return p;
      }
    }
    return -1;
  }

  boolean running() {
    return running;
  }

  void countSecond(long endNanos) {
    int second = (int) ((endNanos - startNanos) / 1_000_000_000L);
    if (second < perSecond.length()) {
      perSecond.incrementAndGet(second);
    }
  }

  void failed(Exception e) {
    failure = e;
  }

  /**
   * Stops every client and returns each phase's figures, 0 .. last phase.
   *
   * @throws IllegalStateException when the load thread ended early (the server could not be
   *     reached, say): its figures would describe a shorter run than the phases say
   */
  List<Result> stop() {
    long end = System.nanoTime();
    phaseStart[lastPhase + 1] = end;
    phase = -1;
    running = false;
    try {
      thread.join(120_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (failure != null) {
      throw new IllegalStateException(
          "the load generator stopped before it was told to: " + failure, failure);
    }
    List<Result> results = new ArrayList<>();
    for (int p = 0; p <= lastPhase; p++) {
      results.add(
          new Result(
              tally.requests[p],
              tally.errors[p],
              (phaseStart[p + 1] - phaseStart[p]) / 1e9,
              tally.histograms[p],
              tally.cpuNanos[p] / 1e9));
    }
    return results;
  }

  /** Responses per second since the start, for as many seconds as were tracked. */
  long[] perSecond() {
    return IntStream.range(0, perSecond.length()).mapToLong(perSecond::get).toArray();
  }

  /** Every 302 answered, warm-up included; read after {@link #stop()}. */
  long totalRedirects() {
    return tally.redirects;
  }

  @Override
  public void close() {
    if (running) {
      stop();
    }
  }
}
