package io.tally.bench.pipeline;

import static io.tally.testing.Table.count;
import static io.tally.testing.Table.fmt;

import io.tally.bench.support.CpuMeter;
import io.tally.bench.support.Report;
import io.tally.local.LocalReconcile;
import io.tally.local.LocalServices;
import io.tally.reconcile.ReconcileOptions;
import io.tally.reconcile.ReconcileReport;
import io.tally.testing.Table;
import java.io.PrintStream;
import java.time.Duration;
import java.util.List;
import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.JobListener;

/**
 * {@code bench reconcile}: batch-reconcile's replay of the preloaded topic against the plain
 * consumer.
 */
public final class ReconcileBenchmark extends BacklogBenchmark {

  ReconcileBenchmark(
      LocalServices stack, PipelineBenchmark backlog, PrintStream out, Report report) {
    super(stack, backlog, out, report);
  }

  /**
   * Runs the reconciliation job over the whole data set's time range (on a MiniCluster of its own,
   * as {@code ./tally reconcile} does) and compares its replay rate with the plain consumer's.
   */
  public void run() throws Exception {
    JobClock clock = new JobClock(cpu);
    ReconcileOptions options =
        LocalReconcile.options(
            stack,
            PipelineBenchmark.TOPIC,
            backlog.truth().from(),
            backlog.truth().to().plus(Duration.ofMinutes(1)),
            settings.parallelism());
    long start = System.nanoTime();
    ReconcileReport result =
        LocalReconcile.run(
            options,
            stack.dir().resolve("flink-reconcile-tmp"),
            settings.flinkConf(),
            List.of(clock));
    double wall = (System.nanoTime() - start) / 1e9;
    double job = clock.netRuntime / 1000.0;
    double replay = result.eventsRead() / job;
    print(result, clock, wall, job, replay);
    report.ratio("reconcile/decoding_consumer", "throughput", replay / backlog.rawDecodeRate());
    report.target(
        "reconcile: replay ≥ 0.4× the decoding consumer",
        fmt(replay / backlog.rawDecodeRate(), 3) + "×",
        replay / backlog.rawDecodeRate() >= 0.4,
        fmt(replay, 0) + " events/s against " + fmt(backlog.rawDecodeRate(), 0) + "/s");
  }

  private void print(
      ReconcileReport result, JobClock clock, double wall, double job, double replay) {
    Table t =
        new Table(
            "bench reconcile: batch-reconcile replaying the topic (Flink BATCH mode)",
            "figure",
            "value");
    t.row(
        "events read (expected " + count(backlog.truth().events()) + ")",
        count(result.eventsRead()));
    t.row(
        "distinct clicks (expected " + count(backlog.truth().distinct()) + ")",
        count(result.distinctClicks()));
    t.row(
        "duplicates (expected " + count(backlog.truth().duplicates()) + ")",
        count(result.duplicates()));
    t.row(
        "minutes checked / differing",
        count(result.minutesChecked()) + " / " + count(result.minutesDiffering()));
    t.row(
        "clicks changed by the repair (+ / −)",
        count(result.clicksAdded()) + " / " + count(result.clicksRemoved()));
    t.row("job net runtime (s)", fmt(job, 1));
    t.row("replay events/s (events read / job net runtime)", fmt(replay, 0));
    t.row("whole run incl. start-up, compare and repair (s)", fmt(wall, 1));
    if (clock.atSubmission != null && clock.atEnd != null) {
      // CPU time per event moves far less than the rate when other work on the machine takes cores
      // away. PostgreSQL's share is left out: the sink's backends start and exit within the job,
      // taking their CPU time with them before the second snapshot.
      CpuMeter.Usage usage = cpu.between(clock.atSubmission, clock.atEnd);
      t.row(
          "CPU during the job: machine busy / this JVM (cores)",
          fmt(usage.machineBusy(), 2) + " / " + fmt(usage.jvm(), 2));
      t.row(
          "JVM CPU per event read (µs; broker and start-up included)",
          fmt(usage.jvm() * usage.seconds() * 1e6 / result.eventsRead(), 1));
    }
    t.row(
        "job settings",
        "BATCH mode, parallelism " + settings.parallelism() + ", " + settings.flinkConf());
    t.row(
        "ratio to the plain consumer, count only (" + fmt(backlog.rawCountRate(), 0) + "/s)",
        fmt(replay / backlog.rawCountRate(), 3));
    t.row(
        "ratio to the plain consumer + decode (" + fmt(backlog.rawDecodeRate(), 0) + "/s)",
        fmt(replay / backlog.rawDecodeRate(), 3));
    t.note(
        "Run after bench pipeline (as in `bench all`) the counts are already exact, so no minute"
            + " should differ; run alone, every minute is missing and the repair writes them all.");
    t.print(out);
  }

  /** The machine's CPU when the recount is submitted and when it ends, and its net runtime. */
  private static final class JobClock implements JobListener {
    private final CpuMeter cpu;
    private volatile CpuMeter.Snapshot atSubmission;
    private volatile CpuMeter.Snapshot atEnd;
    private volatile long netRuntime = -1;

    JobClock(CpuMeter cpu) {
      this.cpu = cpu;
    }

    @Override
    public void onJobSubmitted(JobClient jobClient, Throwable throwable) {
      atSubmission = cpu.snapshot();
    }

    @Override
    public void onJobExecuted(JobExecutionResult result, Throwable throwable) {
      atEnd = cpu.snapshot();
      if (result != null) {
        netRuntime = result.getNetRuntime();
      }
    }
  }
}
