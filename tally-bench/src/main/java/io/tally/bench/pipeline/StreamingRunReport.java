package io.tally.bench.pipeline;

import static io.tally.testing.Table.count;
import static io.tally.testing.Table.fmt;

import com.fasterxml.jackson.databind.JsonNode;
import io.tally.bench.support.CpuMeter;
import io.tally.bench.support.Histograms;
import io.tally.bench.support.Report;
import io.tally.testing.Table;
import java.io.PrintStream;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.HdrHistogram.Histogram;

/** What one run of the streaming job measured: its table, and its figures against the targets. */
final class StreamingRunReport {

  /**
   * The figures of one run.
   *
   * @param plan what was run
   * @param run its throughput and keyed skew
   * @param endToEnd events per second from submission until every event was read
   * @param consumedSeconds seconds from submission until every event was read
   * @param countsSeconds seconds from submission until the counts in PostgreSQL were exact
   * @param usage CPU while the rate was sustained, or null when not sampled
   * @param midRunLoad load per subtask halfway through, or null when not read
   * @param keyedLoad records in per subtask of every keyed vertex
   * @param totals clicks, bot clicks and rows of click_counts
   * @param deadLetters records the run sent to the dead-letter topic
   * @param checkpointInterval the job's checkpoint interval
   * @param summary the job's checkpoint statistics
   * @param checkpoint the checkpoint after the last event, or null when none completed
   * @param dedupState that checkpoint's dedup state in bytes, -1 when unknown
   * @param visitorState that checkpoint's visitor marks in bytes, -1 when unknown
   * @param liveClicks live clicks sent after the backlog
   * @param lags per minute that ended while live clicks flowed, seconds until its count was
   *     complete
   * @param clickToVisible click-to-visible latencies of the live clicks, in nanoseconds
   */
  record Figures(
      StreamingJobBenchmark.JobPlan plan,
      StreamingJobBenchmark.JobRun run,
      double endToEnd,
      double consumedSeconds,
      double countsSeconds,
      CpuMeter.Usage usage,
      List<String> midRunLoad,
      List<KeyedLoad> keyedLoad,
      long[] totals,
      long deadLetters,
      Duration checkpointInterval,
      JsonNode summary,
      JsonNode checkpoint,
      long dedupState,
      long visitorState,
      long liveClicks,
      Map<Long, Double> lags,
      Histogram clickToVisible) {}

  private final PipelineBenchmark backlog;
  private final PipelineBenchmark.Settings settings;
  private final Figures f;
  private final double bytesPerId;

  StreamingRunReport(PipelineBenchmark backlog, Figures figures) {
    this.backlog = backlog;
    this.settings = backlog.settings();
    this.f = figures;
    this.bytesPerId = f.dedupState() / (double) clicksRemembered();
  }

  /** The distinct clicks the job's state holds at the run's last checkpoint. */
  private long clicksRemembered() {
    return f.plan().truth().distinct() + f.liveClicks();
  }

  /** The run's table. */
  void print(PrintStream out) {
    Table t =
        new Table(
            "bench pipeline, "
                + f.plan().workload()
                + " workload: the streaming click job (Kafka → parse → dedup by click id →"
                + " visitor marks by (link, visitor, day) → partial minutes per subtask →"
                + " minutes, hours and days per link → PostgreSQL)",
            "figure",
            "value");
    t.row("sustained events/s (10% → 90% of the topic, dedup input)", fmt(f.run().sustained, 0));
    t.row("events/s from submission until all consumed (start-up included)", fmt(f.endToEnd(), 0));
    t.row(
        "ratio to the plain consumer, count only (" + fmt(backlog.rawCountRate(), 0) + "/s)",
        fmt(f.run().sustained / backlog.rawCountRate(), 3));
    t.row(
        "ratio to the plain consumer + decode (" + fmt(backlog.rawDecodeRate(), 0) + "/s)",
        fmt(f.run().sustained / backlog.rawDecodeRate(), 3));
    t.row("seconds from submission to all events consumed", fmt(f.consumedSeconds(), 1));
    t.row("seconds from submission to exact counts in PostgreSQL", fmt(f.countsSeconds(), 1));
    t.row(
        "CPU while sustained: machine busy / JVM / PostgreSQL (cores)",
        f.usage() == null
            ? "–"
            : fmt(f.usage().machineBusy(), 2)
                + " / "
                + fmt(f.usage().jvm(), 2)
                + " / "
                + fmt(f.usage().postgres(), 2));
    if (f.midRunLoad() != null) {
      t.row("mid-run, dedup input per subtask: min / max (max ÷ mean)", f.midRunLoad().get(0));
      t.row(
          "mid-run, busy ms/s per subtask (avg / max): sources; dedup chain",
          f.midRunLoad().get(1));
      t.row("mid-run, backpressured ms/s per subtask (avg / max): sources", f.midRunLoad().get(2));
      t.row(
          "mid-run, busy / backpressured ms/s per task (avg over subtasks)", f.midRunLoad().get(3));
    }
    for (KeyedLoad load : f.keyedLoad()) {
      t.row("records in per subtask, " + load.vertex() + " (max ÷ mean)", load.describe());
    }
    t.row(
        "keyed records in per subtask, all keyed operators (max ÷ mean)",
        fmt(f.run().keyedSkew, 3));
    t.row(
        "click_counts: clicks + bot_clicks (expected " + count(f.plan().truth().distinct()) + ")",
        count(f.totals()[0] + f.totals()[1]));
    t.row(
        "click_counts: bot_clicks (expected " + count(f.plan().truth().distinctBots()) + ")",
        count(f.totals()[1]));
    t.row(
        "click_counts: rows (expected " + count(f.plan().truth().rows()) + ")",
        count(f.totals()[2]));
    t.row("dead letters (late or malformed; none expected)", count(f.deadLetters()));
    t.row(
        "job settings",
        "parallelism "
            + f.plan().parallelism()
            + ", RocksDB, checkpoints every "
            + f.checkpointInterval().toSeconds()
            + " s, idle timeout "
            + settings.idleTimeout().toSeconds()
            + " s"
            + (settings.flinkConf().isEmpty() ? "" : ", " + settings.flinkConf()));
    t.row(
        "checkpoints completed / failed",
        f.summary().path("counts").path("completed").asLong()
            + " / "
            + f.summary().path("counts").path("failed").asLong());
    t.row(
        "f.checkpoint() duration avg / max (ms)",
        f.summary().path("summary").path("end_to_end_duration").path("avg").asLong()
            + " / "
            + f.summary().path("summary").path("end_to_end_duration").path("max").asLong());
    t.row(
        "checkpointed (incremental) size avg / max (MiB)",
        Table.mib(f.summary().path("summary").path("checkpointed_size").path("avg").asLong())
            + " / "
            + Table.mib(
                f.summary().path("summary").path("checkpointed_size").path("max").asLong()));
    if (f.checkpoint() != null) {
      t.row(
          "full state size, checkpoint "
              + f.checkpoint().path("id").asLong()
              + " after the last event (MiB)",
          Table.mib(f.checkpoint().path("state_size").asLong()));
      t.row("  of it the dedup vertex (MiB)", Table.mib(f.dedupState()));
      t.row("  of it the visitor marks vertex (MiB)", Table.mib(f.visitorState()));
      t.row("dedup state bytes per remembered click id", fmt(bytesPerId, 1));
    }
    if (!f.lags().isEmpty() || f.clickToVisible().getTotalCount() > 0) {
      t.row(
          "live clicks afterwards ("
              + StreamingJobBenchmark.LIVE_CLICKS_PER_SECOND
              + "/s over "
              + StreamingJobBenchmark.LIVE_CODES
              + " codes, stamped now)",
          count(f.liveClicks()));
      t.row(
          "lag: seconds from a minute's end to its complete count in PostgreSQL",
          f.lags().isEmpty()
              ? "no minute closed"
              : f.lags().values().stream().map(v -> fmt(v, 1)).collect(Collectors.joining(", ")));
      t.row(
          "click to visible in click_counts, p50 / p99 / max (s; "
              + f.clickToVisible().getTotalCount()
              + " samples)",
          fmt(Histograms.ms(f.clickToVisible(), 50) / 1000, 2)
              + " / "
              + fmt(Histograms.ms(f.clickToVisible(), 99) / 1000, 2)
              + " / "
              + fmt(Histograms.maxMs(f.clickToVisible()) / 1000, 2));
    }
    t.note(
        "Dedup input = numRecordsIn of the \""
            + StreamingJobBenchmark.DEDUP_VERTEX
            + "\" vertex (summed over subtasks) from Flink's REST API, sampled as it changes"
            + " (refreshed every second). The job has every event when it reaches the topic's size"
            + " (nothing is malformed). Records in per subtask: numRecordsIn of each keyed vertex's"
            + " subtasks once the topic is read; the keyed total adds every keyed vertex's records"
            + " per subtask. The f.checkpoint() taken after the counts were complete holds the"
            + " whole dedup set and no open window, so its state size over the distinct click ids"
            + " (backlog and live) is the per-id cost (an upper bound: RocksDB files not yet"
            + " compacted); the visitor marks are a vertex of their own. Lag: for each minute that"
            + " ended while live clicks flowed, when click_counts first held all of that minute's"
            + " live clicks.");
    t.print(out);
  }

  /** The run's figures against the targets, and its ratio lines. */
  void targets(Report report) {

    boolean exact =
        f.totals()[0] + f.totals()[1] == f.plan().truth().distinct()
            && f.totals()[1] == f.plan().truth().distinctBots()
            && f.totals()[2] == f.plan().truth().rows();
    String what = f.plan().workload() + " workload";
    report.target(
        "pipeline (" + what + "): counts exact",
        exact
            ? "exact"
            : "OFF: " + (f.totals()[0] + f.totals()[1]) + " vs " + f.plan().truth().distinct(),
        exact,
        "sum, bot sum and rows of click_counts vs the generated truth");
    report.target(
        "pipeline (" + what + "): 0 dead letters",
        count(f.deadLetters()),
        f.deadLetters() == 0,
        "");
    if (f.plan().stateCurve() && f.checkpoint() != null) {
      report.ratio("pipeline.state", "bytes_per_click_id", bytesPerId);
      if (f.visitorState() >= 0) {
        double perClick = bytesPerId + f.visitorState() / (double) clicksRemembered();
        report.ratio("pipeline.state", "bytes_per_click", perClick);
        report.target(
            "pipeline: ≤ 35 bytes of checkpointed state per click, dedup and visitor marks",
            fmt(perClick, 1) + " B",
            perClick <= 35,
            "dedup " + fmt(bytesPerId, 1) + " B + marks " + fmt(perClick - bytesPerId, 1) + " B");
      }
      report.target(
          "pipeline: ≤ 35 bytes of checkpointed state per remembered click id",
          fmt(bytesPerId, 1) + " B",
          bytesPerId <= 35,
          count(f.plan().truth().distinct() + f.liveClicks()) + " ids; the dedup vertex");
    }
    f.lags().values().stream()
        .mapToDouble(Double::doubleValue)
        .max()
        .ifPresent(
            max ->
                report.target(
                    "pipeline: lag from a minute's end to its count (no figure in the issue)",
                    fmt(max, 1) + " s at most",
                    true,
                    "live clicks after the backlog"));
    if (f.clickToVisible().getTotalCount() > 0) {
      double p99 = Histograms.ms(f.clickToVisible(), 99) / 1000;
      report.ratio("pipeline.click_to_visible", "p99_s", p99);
      report.target(
          "pipeline: a click visible within 5 s (p99)",
          fmt(p99, 2) + " s",
          p99 <= 5,
          StreamingJobBenchmark.LIVE_CLICKS_PER_SECOND
              + " live clicks/s; p50 "
              + fmt(Histograms.ms(f.clickToVisible(), 50) / 1000, 2)
              + " s");
    }
  }
}
