package io.tally.bench.pipeline;

import static io.tally.testing.Table.count;
import static io.tally.testing.Table.fmt;
import static io.tally.testing.Table.mib;

import com.fasterxml.jackson.databind.JsonNode;
import io.tally.bench.pipeline.StreamingJobBenchmark.JobRun;
import io.tally.bench.support.DatabaseWrites;
import io.tally.bench.support.Histograms;
import io.tally.bench.support.Report;
import io.tally.testing.Table;
import java.io.PrintStream;
import java.util.Arrays;
import java.util.List;
import java.util.function.LongFunction;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.HdrHistogram.Histogram;

/** What one run of the streaming job measured: its table, and its figures against the targets. */
final class StreamingRunReport {

  private final PipelineBenchmark backlog;
  private final JobRun run;
  private final ClickDataset.Truth truth;

  /** The distinct clicks the job's state holds at the run's last checkpoint. */
  private final long clicksRemembered;

  private final double bytesPerId;

  StreamingRunReport(PipelineBenchmark backlog, JobRun run) {
    this.backlog = backlog;
    this.run = run;
    this.truth = run.plan.truth();
    this.clicksRemembered = truth.distinct() + run.liveClicks;
    this.bytesPerId = run.dedupState / (double) clicksRemembered;
  }

  /** The run's table. */
  void print(PrintStream out) {
    Table t =
        new Table(
            "bench pipeline, "
                + run.plan.workload()
                + " workload: the streaming click job (Kafka → parse → people's clicks deduped"
                + " and marked per (link, visitor, day), the rest deduped by click id → partial"
                + " minutes per subtask →"
                + " minutes, hours and days per link → PostgreSQL)",
            "figure",
            "value");
    throughput(t);
    load(t);
    counts(t);
    writes(t);
    checkpoints(t);
    live(t);
    t.note(
            "Dedup input = numRecordsIn of the \""
                + DedupInput.VERTEX
                + "\" and \""
                + DedupInput.VISITOR_VERTEX
                + "\" vertices (summed over subtasks) from Flink's REST API, sampled as it changes"
                + " (refreshed every second). The job has every event when it reaches the topic's"
                + " size (nothing is malformed). Records in per subtask: numRecordsIn of each keyed"
                + " vertex's subtasks once the topic is read; the keyed total adds every keyed"
                + " vertex's records per subtask. The checkpoint taken after the counts were"
                + " complete holds the whole dedup set and no open window, so its state size over"
                + " the distinct click ids (backlog and live) is the per-id cost (an upper bound:"
                + " RocksDB files not yet compacted); the visitor marks' vertex holds the dedup per"
                + " visitor where the job has it. Lag: for each minute that ended while live clicks"
                + " flowed, when click_counts first held all of that minute's live clicks.")
        .print(out);
  }

  private void throughput(Table t) {
    t.row("sustained events/s (10% → 90% of the topic, dedup input)", fmt(run.sustained, 0))
        .row(
            "events/s from submission until all consumed (start-up included)",
            fmt(truth.events() / run.consumedSeconds, 0));
    overConsumer(t, "ratio to the plain consumer, count only", backlog.rawCountRate());
    overConsumer(t, "ratio to the plain consumer + decode", backlog.rawDecodeRate());
    t.row("seconds from submission to all events consumed", fmt(run.consumedSeconds, 1))
        .row("seconds from submission to exact counts in PostgreSQL", fmt(run.countsSeconds, 1))
        .row(
            "CPU while sustained: machine busy / JVM / PostgreSQL (cores)",
            run.usage == null
                ? "–"
                : slashed(run.usage.machineBusy(), run.usage.jvm(), run.usage.postgres()));
  }

  /** The sustained rate over one of the plain consumer's. */
  private void overConsumer(Table t, String label, double rate) {
    t.row(label + " (" + fmt(rate, 0) + "/s)", fmt(run.sustained / rate, 3));
  }

  private void load(Table t) {
    if (run.midRunLoad != null) {
      List<String> load = run.midRunLoad;
      t.row("mid-run, dedup input per subtask: min / max (max ÷ mean)", load.get(0))
          .row(
              "mid-run, busy ms/s per subtask (avg / max): sources; busiest dedup chain",
              load.get(1))
          .row("mid-run, backpressured ms/s per subtask (avg / max): sources", load.get(2))
          .row("mid-run, busy / backpressured ms/s per task (avg over subtasks)", load.get(3));
    }
    for (KeyedLoad load : run.keyedLoad) {
      t.row("records in per subtask, " + load.vertex() + " (max ÷ mean)", load.describe());
    }
    t.row("keyed records in per subtask, all keyed operators (max ÷ mean)", fmt(run.keyedSkew, 3));
  }

  private void counts(Table t) {
    expected(t, "clicks + bot_clicks", truth.distinct(), run.totals[0] + run.totals[1]);
    expected(t, "bot_clicks", truth.distinctBots(), run.totals[1]);
    expected(t, "rows", truth.rows(), run.totals[2]);
    t.row("dead letters (late or malformed; none expected)", count(run.deadLetters));
  }

  private void writes(Table t) {
    DatabaseWrites w = run.writes;
    t.row(
            "PostgreSQL: rows upserted from submission to exact counts (per distinct click)",
            count(w.rows()) + " (" + fmt(w.rows() / (double) clicksRemembered, 3) + ")")
        .row("PostgreSQL: rows upserted per second over that time", fmt(w.rows() / w.seconds(), 0))
        .row("PostgreSQL: WAL bytes per row", fmt(w.walBytesPerRow(), 1))
        .row(
            "PostgreSQL: CPU µs per row (rows per busy core-second)",
            fmt(w.cpuMicrosPerRow(), 1) + " (" + fmt(w.rowsPerCoreSecond(), 0) + ")");
  }

  /** A figure of click_counts against what the generated clicks must add up to. */
  private static void expected(Table t, String what, long expected, long counted) {
    t.row("click_counts: " + what + " (expected " + count(expected) + ")", count(counted));
  }

  private void checkpoints(Table t) {
    PipelineBenchmark.Settings settings = backlog.settings();
    JsonNode summary = run.checkpoints.path("summary");
    t.row(
            "job settings",
            "parallelism "
                + run.plan.parallelism()
                + ", RocksDB, checkpoints every "
                + run.checkpointInterval.toSeconds()
                + " s, idle timeout "
                + settings.idleTimeout().toSeconds()
                + " s"
                + (settings.flinkConf().isEmpty() ? "" : ", " + settings.flinkConf()))
        .row(
            "checkpoints completed / failed",
            pair(run.checkpoints.path("counts"), "completed", "failed", Long::toString))
        .row(
            "checkpoint duration avg / max (ms)",
            pair(summary.path("end_to_end_duration"), "avg", "max", Long::toString))
        .row(
            "checkpointed (incremental) size avg / max (MiB)",
            pair(summary.path("checkpointed_size"), "avg", "max", Table::mib));
    if (run.lastCheckpoint != null) {
      t.row(
              "full state size, checkpoint "
                  + run.lastCheckpoint.path("id").asLong()
                  + " after the last event (MiB)",
              mib(run.lastCheckpoint.path("state_size").asLong()))
          .row("  of it the dedup by click id (MiB)", mib(run.dedupState))
          .row("  of it the visitor marks' vertex (MiB)", mib(run.visitorState))
          .row("dedup-by-id state bytes per remembered click id", fmt(bytesPerId, 1));
    }
  }

  private void live(Table t) {
    Histogram visible = run.clickToVisible;
    if (run.lags.isEmpty() && visible.getTotalCount() == 0) {
      return;
    }
    t.row(
            "live clicks afterwards ("
                + StreamingJobBenchmark.LIVE_CLICKS_PER_SECOND
                + "/s over "
                + StreamingJobBenchmark.LIVE_CODES
                + " codes, stamped now)",
            count(run.liveClicks))
        .row(
            "lag: seconds from a minute's end to its complete count in PostgreSQL",
            run.lags.isEmpty()
                ? "no minute closed"
                : run.lags.values().stream().map(v -> fmt(v, 1)).collect(Collectors.joining(", ")))
        .row(
            "click to visible in click_counts, p50 / p99 / max (s; "
                + visible.getTotalCount()
                + " samples)",
            slashed(seconds(visible, 50), seconds(visible, 99), Histograms.maxMs(visible) / 1000));
  }

  /** The run's figures against the targets, and its ratio lines. */
  void targets(Report report) {
    long[] totals = run.totals;
    boolean exact =
        totals[0] + totals[1] == truth.distinct()
            && totals[1] == truth.distinctBots()
            && totals[2] == truth.rows();
    String what = "pipeline (" + run.plan.workload() + " workload): ";
    report.target(
        what + "counts exact",
        exact ? "exact" : "OFF: " + (totals[0] + totals[1]) + " vs " + truth.distinct(),
        exact,
        "sum, bot sum and rows of click_counts vs the generated truth");
    report.target(what + "0 dead letters", count(run.deadLetters), run.deadLetters == 0, "");
    report.ratio(
        "pipeline.postgres", "rows_per_click", run.writes.rows() / (double) clicksRemembered);
    report.ratio("pipeline.postgres", "wal_bytes_per_row", run.writes.walBytesPerRow());
    report.ratio("pipeline.postgres", "cpu_us_per_row", run.writes.cpuMicrosPerRow());
    if (run.plan.stateCurve() && run.lastCheckpoint != null) {
      if (!run.dedupPerVisitor) {
        report.ratio("pipeline.state", "bytes_per_click_id", bytesPerId);
      }
      if (run.visitorState >= 0) {
        double perClick = bytesPerId + run.visitorState / (double) clicksRemembered;
        report.ratio("pipeline.state", "bytes_per_click", perClick);
        report.target(
            "pipeline: ≤ 35 bytes of checkpointed state per click, dedup and visitor marks",
            fmt(perClick, 1) + " B",
            perClick <= 35,
            "dedup " + fmt(bytesPerId, 1) + " B + marks " + fmt(perClick - bytesPerId, 1) + " B");
      }
      // Where people's clicks are deduped beside their marks, that vertex's state holds ids and
      // marks together: only the sum above has a figure.
      if (!run.dedupPerVisitor) {
        report.target(
            "pipeline: ≤ 12 bytes of checkpointed state per remembered click id",
            fmt(bytesPerId, 1) + " B",
            bytesPerId <= 12,
            count(clicksRemembered) + " ids; the dedup vertex");
      }
    }
    run.lags.values().stream()
        .mapToDouble(Double::doubleValue)
        .max()
        .ifPresent(
            max ->
                report.target(
                    "pipeline: lag from a minute's end to its count (no figure in the issue)",
                    fmt(max, 1) + " s at most",
                    true,
                    "live clicks after the backlog"));
    if (run.clickToVisible.getTotalCount() > 0) {
      double p99 = seconds(run.clickToVisible, 99);
      report.ratio("pipeline.click_to_visible", "p99_s", p99);
      report.target(
          "pipeline: a click visible within 5 s (p99)",
          fmt(p99, 2) + " s",
          p99 <= 5,
          StreamingJobBenchmark.LIVE_CLICKS_PER_SECOND
              + " live clicks/s; p50 "
              + fmt(seconds(run.clickToVisible, 50), 2)
              + " s");
    }
  }

  private static double seconds(Histogram histogram, double percentile) {
    return Histograms.ms(histogram, percentile) / 1000;
  }

  /** Values with two decimals, as {@code a / b / c}. */
  private static String slashed(double... values) {
    return Arrays.stream(values).mapToObj(v -> fmt(v, 2)).collect(Collectors.joining(" / "));
  }

  /** Two fields of one of the REST API's checkpoint statistics, as {@code first / second}. */
  private static String pair(
      JsonNode statistic, String first, String second, LongFunction<String> format) {
    return Stream.of(first, second)
        .map(field -> format.apply(statistic.path(field).asLong()))
        .collect(Collectors.joining(" / "));
  }
}
