package io.tally.bench.redirect;

import static io.tally.testing.Table.count;
import static io.tally.testing.Table.fmt;

import io.tally.bench.support.Columns;
import io.tally.bench.support.Report;
import io.tally.local.LocalServices;
import io.tally.redirect.RedirectWebServer;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.StringJoiner;
import java.util.function.ToDoubleFunction;

/**
 * {@code bench broker-down}: redirect-web in async mode under steady load (Zipf workload) while its
 * only Kafka broker is stopped and restarted. Redirects must keep their speed; clicks that find the
 * producer's buffer full are dropped and counted, and counting resumes by itself.
 */
public final class BrokerDownBenchmark {

  /** What to run. */
  public record Settings(int connections, Duration phase, int links, long seed) {}

  /** The phases of a run, each with the mark it leaves where it starts in the timeline. */
  private enum Phase {
    BEFORE("before", ""),
    DOWN("broker stopping + down", "[stop] "),
    RESTARTING("broker restarting", "[restart] "),
    AFTER("after restart", "[up] ");

    final String label;
    final String marker;

    Phase(String label, String marker) {
      this.label = label;
      this.marker = marker;
    }
  }

  /** What the load and the producer's counters saw in one phase. */
  private record PhaseRun(
      Phase phase, LoadGenerator.Result result, ClickCounters start, ClickCounters end) {
    String counted(ToDoubleFunction<ClickCounters> counter) {
      return count((long) (counter.applyAsDouble(end) - counter.applyAsDouble(start)));
    }
  }

  private static final Columns<PhaseRun> COLUMNS =
      new Columns<PhaseRun>()
          .and("phase", r -> r.phase().label)
          .and("seconds", r -> fmt(r.result().seconds(), 1))
          .and("req/s", r -> fmt(r.result().throughput(), 0))
          .and(LoadGenerator.LATENCY, PhaseRun::result)
          .and("events sent", r -> r.counted(ClickCounters::sent))
          .and("acknowledged", r -> r.counted(ClickCounters::acknowledged))
          .and("dropped", r -> r.counted(ClickCounters::dropped));

  private final LocalServices stack;
  private final Settings settings;
  private final PrintStream out;

  public BrokerDownBenchmark(LocalServices stack, Settings settings, PrintStream out) {
    this.stack = stack;
    this.settings = settings;
    this.out = out;
  }

  public void run(Report report) throws Exception {
    List<String> spread = RedirectFixture.spreadCodes(settings.links());
    RedirectFixture.createLinks(stack, spread);
    stack.createClickTopics();
    Workload workload = Workload.zipf(spread, 1.0);
    try (RedirectWebServer server = RedirectFixture.start(stack, CountingMode.ASYNC)) {
      int port = server.port();
      out.printf(
          Locale.ROOT,
          "bench broker-down: async redirect-web on port %d, %d connections, %s workload, %d s"
              + " phases%n",
          port,
          settings.connections(),
          workload.name(),
          settings.phase().toSeconds());
      LoadGenerator load =
          LoadGenerator.start(port, workload, settings.connections(), settings.seed(), 600);
      List<ClickCounters> marks = new ArrayList<>();
      long[] startSecond = new long[Phase.values().length];
      long t0 = System.nanoTime();
      List<LoadGenerator.Result> results;
      try {
        Thread.sleep(10_000); // warm-up: a fresh server and producer
        for (Phase phase : Phase.values()) {
          marks.add(ClickCounters.scrape(port));
          startSecond[phase.ordinal()] = seconds(t0);
          load.phase(phase.ordinal());
          if (phase == Phase.DOWN) {
            stack.kafka().stop();
          }
          if (phase == Phase.RESTARTING) {
            stack.kafka().restart();
          } else {
            Thread.sleep(settings.phase().toMillis());
          }
        }
      } finally {
        results = load.stop();
        stack.kafka().restart();
      }
      marks.add(ClickCounters.scrape(port));
      String timeline = timeline(load.perSecond(), startSecond, seconds(t0));
      ClickCounters last = ClickCounters.awaitSettled(port, Duration.ofSeconds(150));
      List<PhaseRun> runs = new ArrayList<>();
      for (Phase phase : Phase.values()) {
        int p = phase.ordinal();
        runs.add(new PhaseRun(phase, results.get(p), marks.get(p), marks.get(p + 1)));
      }
      print(runs, timeline, last, load.totalRedirects());
      targets(report, results, last, load.totalRedirects());
    }
  }

  private void print(List<PhaseRun> runs, String timeline, ClickCounters last, long answered) {
    COLUMNS
        .table("bench broker-down: async redirects while the Kafka broker stops and restarts", runs)
        .note("Responses per second from the first measured second: " + timeline)
        .note(
            String.format(
                Locale.ROOT,
                "After the run (buffer drained): redirects answered %s (warm-up included), events"
                    + " sent %s, acknowledged %s, dropped %s (%s).",
                count(answered),
                count((long) last.sent()),
                count((long) last.acknowledged()),
                count((long) last.dropped()),
                last.dropsByReason()))
        .note(
            "Acknowledged per phase counts acknowledgements that arrived in that phase, whenever"
                + " the event was sent. The producer's buffer is 8 MiB (TALLY_KAFKA_BUFFER_BYTES)"
                + " and max.block.ms 2 ms.")
        .print(out);
  }

  private void targets(
      Report report, List<LoadGenerator.Result> results, ClickCounters last, long answered) {
    LoadGenerator.Result before = results.get(Phase.BEFORE.ordinal());
    compare(report, "broker-down.down/before", results.get(Phase.DOWN.ordinal()), before);
    compare(report, "broker-down.after/before", results.get(Phase.AFTER.ordinal()), before);
    // Requests in flight when the load stopped were counted by the server but never read by the
    // client.
    long redirectsVsSent = (long) (answered - last.sent());
    long unaccounted = (long) last.unsettled();
    long errors = results.stream().mapToLong(LoadGenerator.Result::errors).sum();
    report.target(
        "broker-down: every redirect answered, each click acknowledged or counted as dropped",
        "errors "
            + errors
            + ", clicks not sent "
            + Math.max(0, redirectsVsSent)
            + " ("
            + Math.max(0, -redirectsVsSent)
            + " in flight at the stop), sent but neither acknowledged nor dropped "
            + unaccounted,
        errors == 0
            && redirectsVsSent <= 0
            && -redirectsVsSent <= settings.connections()
            && unaccounted == 0,
        "no figure in the issue");
  }

  /** Responses per second from the first phase's start, each phase's mark where it starts. */
  private static String timeline(long[] perSecond, long[] startSecond, long endSecond) {
    StringJoiner timeline = new StringJoiner(" ");
    for (long s = startSecond[0]; s < Math.min(endSecond, perSecond.length); s++) {
      String marker = "";
      for (Phase phase : Phase.values()) {
        if (startSecond[phase.ordinal()] == s) {
          marker = phase.marker;
        }
      }
      timeline.add(marker + perSecond[(int) s]);
    }
    return timeline.toString();
  }

  private static void compare(
      Report report, String what, LoadGenerator.Result phase, LoadGenerator.Result before) {
    report.ratio(what, "throughput", phase.throughput() / before.throughput());
    report.ratio(what, "p99", phase.ms(99) / before.ms(99));
  }

  private static long seconds(long t0) {
    return (System.nanoTime() - t0) / 1_000_000_000L;
  }
}
