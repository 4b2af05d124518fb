package io.tally.bench.pipeline;

import static io.tally.testing.Table.count;
import static io.tally.testing.Table.fmt;
import static io.tally.testing.Table.mib;

import com.fasterxml.jackson.databind.JsonNode;
import io.tally.bench.support.Report;
import io.tally.local.FlinkRest;
import io.tally.testing.Table;
import java.io.PrintStream;
import java.util.Map;
import java.util.TreeMap;

/**
 * The job's checkpoints while it reads the backlog: at each, how many click ids the dedup set held
 * (from the dedup input sampled around the checkpoint's trigger time, less the data set's share of
 * duplicates), the dedup chain's full state size and the checkpoint's duration and incremental
 * size.
 */
final class StateCurve {
  private final FlinkRest rest;
  private final String jobId;
  private final DedupInput input;
  private final ClickDataset.Truth data;

  private final TreeMap<Long, JsonNode> completed = new TreeMap<>();
  private final Map<Long, Long> dedupStateById = new TreeMap<>();
  private long lastPoll;

  StateCurve(FlinkRest rest, String jobId, DedupInput input, ClickDataset.Truth data) {
    this.rest = rest;
    this.jobId = jobId;
    this.input = input;
    this.data = data;
  }

  void poll() {
    if (System.currentTimeMillis() - lastPoll < 1000) {
      return;
    }
    lastPoll = System.currentTimeMillis();
    for (JsonNode checkpoint : rest.checkpoints(jobId).path("history")) {
      long id = checkpoint.path("id").asLong();
      if (checkpoint.path("status").asText().equals("COMPLETED") && !completed.containsKey(id)) {
        completed.put(id, checkpoint);
        JsonNode tasks = rest.checkpointDetails(jobId, id).path("tasks");
        long state = 0;
        for (String vertex : input.vertexIds()) {
          state += tasks.path(vertex).path("state_size").asLong(0);
        }
        dedupStateById.put(id, state);
      }
    }
  }

  /** Clicks read by {@code epochMillis}: the last dedup input sample before it. */
  private long clicksAt(long epochMillis) {
    long in = 0;
    for (long[] sample : input.samples()) {
      if (sample[2] <= epochMillis) {
        in = sample[1];
      }
    }
    return in;
  }

  /** Distinct click ids taken in by {@code epochMillis}, less the data set's share of copies. */
  private long idsAt(long epochMillis) {
    return Math.round(clicksAt(epochMillis) * (data.distinct() / (double) data.events()));
  }

  void print(PrintStream out, Report report) {
    Table t =
        new Table(
            "State and checkpoints as the remembered click ids grow (one run, the Zipf backlog)",
            "checkpoint",
            "click ids remembered",
            "dedup state (MiB)",
            "bytes per id",
            "duration (ms)",
            "incremental size (MiB)",
            "incremental bytes per click read since the last");
    JsonNode largest = null;
    long largestIds = 0;
    long clicksBefore = -1;
    long incrementalBytes = 0;
    long clicksBetween = 0;
    for (Map.Entry<Long, JsonNode> e : completed.entrySet()) {
      JsonNode c = e.getValue();
      long clicks = clicksAt(c.path("trigger_timestamp").asLong());
      long ids = idsAt(c.path("trigger_timestamp").asLong());
      long state = dedupStateById.getOrDefault(e.getKey(), -1L);
      long incremental = c.path("checkpointed_size").asLong();
      long read = clicksBefore < 0 ? 0 : clicks - clicksBefore;
      t.row(
          e.getKey(),
          count(ids),
          mib(state),
          ids == 0 ? "–" : fmt(state / (double) ids, 1),
          c.path("end_to_end_duration").asLong(),
          mib(incremental),
          read <= 0 ? "–" : fmt(incremental / (double) read, 1));
      if (read > 0) {
        incrementalBytes += incremental;
        clicksBetween += read;
      }
      clicksBefore = clicks;
      if (ids >= largestIds) {
        largest = c;
        largestIds = ids;
      }
    }
    t.note(
        "Ids at a checkpoint: the dedup input sampled just before its trigger time, less the data"
            + " set's duplicate share; sizes from the REST API's checkpoint details (RocksDB files,"
            + " before compaction catches up). Durations include the time barriers wait behind the"
            + " backlog in the network buffers.");
    t.print(out);
    if (clicksBetween > 0) {
      report.ratio(
          "pipeline.checkpoint",
          "incremental_bytes_per_click",
          incrementalBytes / (double) clicksBetween);
    }
    if (largest != null) {
      report.ratio(
          "pipeline.checkpoint_at_" + Math.round(largestIds / 1e6) + "M_ids",
          "duration_ms",
          largest.path("end_to_end_duration").asLong());
    }
  }
}
