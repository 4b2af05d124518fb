package io.tally.bench.redirect;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tally.bench.support.Histograms;
import java.net.ServerSocket;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

/**
 * Tests for {@link LoadGenerator}'s latency accounting, against a local server whose answer time is
 * known: what the redirect benchmarks report is only as true as these figures.
 */
class LoadGeneratorTest {

  private static final long DELAY_MS = 20;

  /**
   * What a shared 2-core machine may add to a 20 ms answer: scheduling, loopback, the JDK server's
   * own work. Only the median is bounded above: with other builds on the cores (load averages of 20
   * were seen while these tests ran) one descheduled moment is a whole tail. Lower bounds and
   * counts hold however busy the machine is, and are exact.
   */
  private static final double P50_SLACK_MS = 8;

  @Test
  void closedLoopLatencyIsTheServersAnswerTime() throws Exception {
    int connections = 4;
    try (DelayedServer server = new DelayedServer(DELAY_MS, TimeUnit.MILLISECONDS);
        LoadGenerator load =
            LoadGenerator.start(server.port(), Workload.hot("abc"), connections, 1, 0)) {
      awaitCondition(() -> server.answered() >= 20);
      load.phase(0);
      awaitCondition(() -> server.answered() >= 150);
      LoadGenerator.Result result = load.stop().get(0);

      Histogram latency = result.latency();
      assertThat(result.errors()).isZero();
      assertThat(result.requests()).isGreaterThanOrEqualTo(100);
      // Never faster than the server's delay: a latency below it would be timed from the wrong
      // instant.
      assertThat(latency.getMinValue() / 1e6).isGreaterThanOrEqualTo(DELAY_MS * 0.999);
      assertThat(Histograms.ms(latency, 50)).isBetween(DELAY_MS * 0.999, DELAY_MS + P50_SLACK_MS);
      // N connections each waiting DELAY_MS per answer can do no more than N / DELAY_MS requests a
      // second.
      double ceiling = connections * 1000.0 / DELAY_MS;
      assertThat(result.throughput()).isPositive().isLessThanOrEqualTo(ceiling * 1.01);
    }
  }

  @Test
  void closedLoopCountsEveryAnswerTheServerSent() throws Exception {
    int connections = 4;
    try (DelayedServer server = new DelayedServer(2, TimeUnit.MILLISECONDS)) {
      LoadGenerator load =
          LoadGenerator.start(server.port(), Workload.hot("abc"), connections, 1, 0);
      awaitCondition(() -> server.answered() >= 20);
      load.phase(0);
      awaitCondition(() -> server.answered() >= 200);
      // Every connection's next request held at the server: every answer sent so far has been read.
      server.hold();
      awaitCondition(() -> server.waiting() == connections);
      List<LoadGenerator.Result> results = load.stop();
      long answered = server.answered();
      server.release();

      assertThat(load.totalRedirects()).isEqualTo(answered);
      assertThat(results.get(0).requests()).isPositive().isLessThan(answered);
      assertThat(results.get(0).errors()).isZero();
    }
  }

  @Test
  void openLoopTimesRequestsFromWhenTheyWereDueSoAStallShowsInEveryRequestItDelayed()
      throws Exception {
    // Each connection's requests fall due 40 ms apart: more than an answer takes, so the backlog
    // after the stall clears, and few enough connections that the stall's requests far outnumber
    // those it caught in flight.
    int connections = 8;
    int rate = 200;
    long stallMs = 400;
    try (DelayedServer server = new DelayedServer(1, TimeUnit.MILLISECONDS);
        LoadGenerator load =
            LoadGenerator.startAtRate(server.port(), Workload.hot("abc"), connections, 1, rate)) {
      awaitCondition(() -> server.answered() >= 40);
      load.phase(0);
      Thread.sleep(300);
      server.stallFor(TimeUnit.MILLISECONDS.toNanos(stallMs));
      Thread.sleep(stallMs + 1600);
      LoadGenerator.Result result = load.stop().get(0);
      Histogram latency = result.latency();

      // Requests fall due every 1 / rate seconds through the stall, and each waits from its due
      // time until the stall ends: rate × stall requests delayed, half of them by more than half
      // the stall. Timed from when each could be written, only the few in flight when the stall
      // began (one per connection) would look slow.
      long dueInFirstHalfOfStall = rate * stallMs / 2 / 1000;
      long slowerThanHalfTheStall =
          latency.getCountBetweenValues(
              TimeUnit.MILLISECONDS.toNanos(stallMs / 2), latency.getMaxValue());
      assertThat(slowerThanHalfTheStall)
          .isGreaterThanOrEqualTo((long) (dueInFirstHalfOfStall * 0.8));
      assertThat(Histograms.maxMs(latency)).isGreaterThanOrEqualTo(stallMs * 0.95);
      // The offered load is kept: the requests due during the stall are sent after it, not skipped.
      // (The last ones due may still be unsent or in flight at the stop, more of them the busier
      // the machine.)
      double offered = rate * result.seconds();
      assertThat(result.requests())
          .isBetween((long) (offered * 0.85) - connections, (long) offered + connections);
      assertThat(result.errors()).isZero();
    }
  }

  @Test
  void openLoopCountsARequestInThePhaseItWasDueIn() throws Exception {
    int connections = 8;
    int rate = 200;
    try (DelayedServer server = new DelayedServer(1, TimeUnit.MILLISECONDS);
        LoadGenerator load =
            LoadGenerator.startAtRate(server.port(), Workload.hot("abc"), connections, 1, rate)) {
      awaitCondition(() -> server.answered() >= 40);
      // Requests due in the warm-up's last 400 ms can only be sent once the stall is over, in phase
      // 0.
      server.stallFor(TimeUnit.MILLISECONDS.toNanos(600));
      Thread.sleep(400);
      load.phase(0);
      Thread.sleep(1000);
      LoadGenerator.Result result = load.stop().get(0);

      double offered = rate * result.seconds();
      assertThat(result.requests())
          .isBetween((long) (offered * 0.85) - connections, (long) offered + connections);
      // Due at the phase's start at the earliest, none waited longer than the 200 ms of stall left
      // in it.
      assertThat(Histograms.maxMs(result.latency())).isLessThan(400.0);
    }
  }

  @Test
  void aLoadThatCouldNotRunFailsInsteadOfReportingAnEmptyPhase() throws Exception {
    int closedPort;
    try (ServerSocket socket = new ServerSocket(0)) {
      closedPort = socket.getLocalPort();
    }
    LoadGenerator load = LoadGenerator.start(closedPort, Workload.hot("abc"), 2, 1, 0);
    load.phase(0);

    assertThatThrownBy(load::stop)
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("stopped before it was told to");
  }

  private static void awaitCondition(BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("condition not met within 15 s");
      }
      Thread.sleep(5);
    }
  }
}
