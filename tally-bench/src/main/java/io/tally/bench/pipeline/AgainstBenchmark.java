package io.tally.bench.pipeline;

import static io.tally.testing.Table.fmt;

import io.tally.bench.support.CpuMeter;
import io.tally.bench.support.DatabaseWrites;
import io.tally.bench.support.Histograms;
import io.tally.bench.support.OtherVersion;
import io.tally.bench.support.Report;
import io.tally.bench.support.Sql;
import io.tally.local.ClickJobProcess;
import io.tally.local.FlinkRest;
import io.tally.local.LocalServices;
import io.tally.testing.Table;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.DoubleSummaryStatistics;
import java.util.List;
import java.util.Optional;
import java.util.function.ToDoubleFunction;
import org.HdrHistogram.Histogram;

/**
 * {@code bench pipeline --against REF}: this build's click job and another version's, each in a
 * child JVM of its own, read the same preloaded topic in turns, A B B A, and the ratio of their
 * sustained rates is printed. With {@code --lag}, each run then takes live clicks for that long, as
 * the default bench's live phase does, and what they cost (rows, PostgreSQL's and the job's CPU,
 * the writer's busy time) and how soon they show are compared too. This machine's speed swings by
 * up to 2× between minutes, so only runs side by side and alternated tell a change from the
 * weather.
 */
final class AgainstBenchmark {

  /**
   * Live clicks flow this long before they are measured: the backlog's last periods close and are
   * written meanwhile, and a full cycle of the job's half-minute writes passes.
   */
  private static final Duration LIVE_WARM_UP = Duration.ofSeconds(40);

  private static final String WRITER_VERTEX = "Upsert click_counts";

  private final LocalServices stack;
  private final PipelineBenchmark backlog;
  private final PrintStream out;
  private final Report report;
  private final CpuMeter cpu;

  AgainstBenchmark(LocalServices stack, PipelineBenchmark backlog, PrintStream out, Report report) {
    this.stack = stack;
    this.backlog = backlog;
    this.out = out;
    this.report = report;
    this.cpu = new CpuMeter(stack.postmasterPid());
  }

  /** One run's figures; {@code live} is null without a live phase. */
  private record Run(boolean mine, double sustained, Live live) {}

  /**
   * What live clicks cost after the backlog, and how soon they showed.
   *
   * @param clicks live clicks sent while measured
   * @param writes PostgreSQL's rows, WAL and CPU while measured
   * @param usage the machine's CPU while measured
   * @param jobCores the job's JVM, in cores
   * @param writerBusy the aggregates writer's busy ms per second at the end, over its subtasks
   * @param clickToVisible nanoseconds from a click until as many were in {@code click_counts}
   */
  private record Live(
      long clicks,
      DatabaseWrites writes,
      CpuMeter.Usage usage,
      double jobCores,
      double writerBusy,
      Histogram clickToVisible) {

    double rowsPerClick() {
      return writes.rows() / (double) clicks;
    }

    double postgresCores() {
      return usage.postgres();
    }

    double p99Seconds() {
      return Histograms.ms(clickToVisible, 99) / 1000;
    }
  }

  void run(String ref, int rounds) throws Exception {
    String theirs = OtherVersion.classPath(ref, out);
    String ours = OtherVersion.workingTreeClassPath(out);
    List<Run> runs = new ArrayList<>();
    for (int run = 0; run < 4 * rounds; run++) {
      boolean mine = isThisBuild(run);
      Run result = runOnce(run, mine, mine ? ours : theirs);
      out.printf(
          "run %d (%s): %s events/s%n", run + 1, mine ? "this" : ref, fmt(result.sustained, 0));
      runs.add(result);
    }
    printThroughput(ref, runs);
    if (runs.get(0).live() != null) {
      printLive(ref, runs);
    }
  }

  private void printThroughput(String ref, List<Run> runs) {
    Table t =
        new Table(
            "This build's click job against " + ref + " on one topic, alternately",
            "run",
            "version",
            "sustained events/s",
            "÷ decoding consumer");
    for (int i = 0; i < runs.size(); i++) {
      Run run = runs.get(i);
      t.row(
          i + 1,
          run.mine() ? "this" : ref,
          fmt(run.sustained(), 0),
          fmt(run.sustained() / backlog.rawDecodeRate(), 3));
    }
    double ratio = mean(runs, true, Run::sustained) / mean(runs, false, Run::sustained);
    double spread = Math.max(spread(runs, true), spread(runs, false));
    t.note(
        "Each run a fresh consumer group from the topic's start, parallelism "
            + backlog.settings().parallelism()
            + ", in a child JVM of 1 GiB heap; sustained = from 10% to 90% of the topic, read at"
            + " the dedup vertex. Mean this/"
            + ref
            + " = "
            + fmt(ratio, 3)
            + "; one version's runs differ by up to "
            + fmt(spread, 3)
            + "×. A ratio no farther from 1 than that, or than a run of a commit against itself"
            + " (docs/benchmarks.md), does not show either version faster.");
    t.print(out);
    report.ratio("pipeline.this/against", "throughput", ratio);
    report.ratio("pipeline.this/against", "run_spread", spread);
    report.ratio(
        "pipeline/decoding_consumer",
        "throughput",
        mean(runs, true, Run::sustained) / backlog.rawDecodeRate());
  }

  private void printLive(String ref, List<Run> runs) {
    Table t =
        new Table(
            "Live clicks after the backlog, "
                + StreamingJobBenchmark.LIVE_CLICKS_PER_SECOND
                + "/s over "
                + StreamingJobBenchmark.LIVE_CODES
                + " links, for "
                + backlog.settings().lagDuration().toSeconds()
                + " s per run",
            "run",
            "version",
            "rows/s",
            "rows per click",
            "WAL B/s",
            "PostgreSQL cores",
            "job JVM cores",
            "machine busy",
            "writer busy ms/s",
            "click to visible p50 / p99 s");
    for (int i = 0; i < runs.size(); i++) {
      Run run = runs.get(i);
      Live live = run.live();
      t.row(
          i + 1,
          run.mine() ? "this" : ref,
          fmt(live.writes().rows() / live.writes().seconds(), 0),
          fmt(live.rowsPerClick(), 2),
          fmt(live.writes().walBytes() / live.writes().seconds(), 0),
          fmt(live.postgresCores(), 3),
          fmt(live.jobCores(), 3),
          fmt(live.usage().machineBusy(), 2),
          fmt(live.writerBusy(), 0),
          fmt(Histograms.ms(live.clickToVisible(), 50) / 1000, 2)
              + " / "
              + fmt(live.p99Seconds(), 2));
    }
    t.note(
        "Measured after "
            + LIVE_WARM_UP.toSeconds()
            + " s of live clicks; PostgreSQL is the whole server, the bench's own polling of"
            + " click_counts included (the same in every run); the writer's busy time is the"
            + " REST API's at the end of the phase.");
    t.print(out);
    report.ratio(
        "pipeline.live.this/against", "rows_per_click", liveRatio(runs, Live::rowsPerClick));
    report.ratio(
        "pipeline.live.this/against", "postgres_cpu", liveRatio(runs, Live::postgresCores));
    report.ratio("pipeline.live.this/against", "job_cpu", liveRatio(runs, Live::jobCores));
    report.ratio("pipeline.live.this/against", "writer_busy", liveRatio(runs, Live::writerBusy));
    report.ratio(
        "pipeline.live.this/against", "click_to_visible_p99", liveRatio(runs, Live::p99Seconds));
  }

  private static double liveRatio(List<Run> runs, ToDoubleFunction<Live> figure) {
    return mean(runs, true, run -> figure.applyAsDouble(run.live()))
        / mean(runs, false, run -> figure.applyAsDouble(run.live()));
  }

  /** The fastest of one version's runs over its slowest. */
  private static double spread(List<Run> runs, boolean mine) {
    DoubleSummaryStatistics rates =
        runs.stream()
            .filter(run -> run.mine() == mine)
            .mapToDouble(Run::sustained)
            .summaryStatistics();
    return rates.getMax() / rates.getMin();
  }

  private static double mean(List<Run> runs, boolean mine, ToDoubleFunction<Run> figure) {
    return runs.stream()
        .filter(run -> run.mine() == mine)
        .mapToDouble(figure)
        .average()
        .orElseThrow();
  }

  /**
   * A B B A: each version runs once first and once last, so that neither gains from the machine
   * warming up or loses to it filling up.
   */
  private static boolean isThisBuild(int run) {
    return run % 4 == 0 || run % 4 == 3;
  }

  /** One run of the job on {@code classPath}: the whole topic, then live clicks when asked. */
  private Run runOnce(int run, boolean mine, String classPath) throws Exception {
    Sql.emptyCountTables(stack);
    Path work = stack.dir().resolve("against-run-" + (run + 1));
    List<String> args =
        List.of(
            "--bootstrap-servers", stack.bootstrapServers(),
            "--topic", PipelineBenchmark.TOPIC,
            "--dlq-topic", PipelineBenchmark.DLQ_TOPIC,
            "--group-id", "bench-against-" + (run + 1),
            "--jdbc-url", stack.jdbcUrl(),
            "--jdbc-user", stack.dbUser(),
            "--jdbc-password", stack.dbPassword(),
            "--parallelism", String.valueOf(backlog.settings().parallelism()),
            "--idle-timeout", backlog.settings().idleTimeout().toMillis() + "ms");
    long events = backlog.truth().events();
    try (ClickJobProcess job = new ClickJobProcess(work, args, classPath)) {
      job.start(Optional.empty());
      DedupInput input = DedupInput.of(job.rest(), job.jobId());
      input.awaitRecords(events, in -> {});
      double sustained = input.rate(events / 10, events * 9 / 10);
      Duration lag = backlog.settings().lagDuration();
      return new Run(mine, sustained, lag.isZero() ? null : live(run, job, lag));
    }
  }

  /**
   * Live clicks for {@code duration} after a warm-up, on links of this run's own (an earlier run's
   * live clicks are on the topic too, and the job reads them as backlog).
   */
  private Live live(int run, ClickJobProcess job, Duration duration) throws Exception {
    ProcessHandle jvm = job.processHandle().orElseThrow();
    try (LiveClicks live =
        new LiveClicks(
            stack.bootstrapServers(),
            PipelineBenchmark.TOPIC,
            StreamingJobBenchmark.LIVE_CLICKS_PER_SECOND,
            StreamingJobBenchmark.LIVE_CODES,
            backlog.settings().seed() + run,
            LiveClicks.CODE_PREFIX + (run + 1) + "-")) {
      Thread.sleep(LIVE_WARM_UP.toMillis());
      DatabaseWrites.Mark from = DatabaseWrites.Mark.take(stack, cpu);
      long jobNanosFrom = CpuMeter.cpu(jvm);
      long sentFrom = live.sent();
      LiveClicks.Latency latency = live.measureLatency(stack, duration);
      double writerBusy = writerBusy(job.rest(), job.jobId());
      // The table statistics trail commits by up to a second: every figure takes that second too.
      Thread.sleep(1_000);
      long sentTo = live.sent();
      long jobNanosTo = CpuMeter.cpu(jvm);
      DatabaseWrites.Mark to = DatabaseWrites.Mark.take(stack, cpu);
      CpuMeter.Usage usage = cpu.between(from.cpu(), to.cpu());
      return new Live(
          sentTo - sentFrom,
          DatabaseWrites.between(from, to, cpu),
          usage,
          (jobNanosTo - jobNanosFrom) / 1e9 / usage.seconds(),
          writerBusy,
          latency.clickToVisible());
    }
  }

  private static double writerBusy(FlinkRest rest, String jobId) {
    return rest.vertexMetricSpread(
            jobId, rest.vertexId(jobId, WRITER_VERTEX), "busyTimeMsPerSecond")
        .map(v -> v.path("avg").asDouble())
        .orElse(Double.NaN);
  }
}
