package io.tally.bench.pipeline;

import static io.tally.testing.Table.fmt;

import com.fasterxml.jackson.databind.JsonNode;
import io.tally.local.FlinkRest;
import io.tally.testing.Table;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The checkpoints taken while live clicks were timed, and what held the slowest task of each: its
 * synchronous part (which holds the task's thread, and the clicks behind it), its asynchronous
 * part, its barrier alignment and the barrier's start delay. The evidence to set beside the tail of
 * click to visible, whose slowest clicks say when they left.
 */
final class LiveCheckpoints {

  /**
   * One completed checkpoint.
   *
   * @param triggeredAfter seconds from the start of the timing to the trigger
   * @param slowestTask the task that acknowledged last
   */
  record Checkpoint(
      long id,
      double triggeredAfter,
      long endToEndMs,
      String slowestTask,
      long syncMs,
      long asyncMs,
      long alignmentMs,
      long startDelayMs) {}

  private LiveCheckpoints() {}

  /** The completed checkpoints triggered from {@code from} to {@code to} (epoch millis). */
  static List<Checkpoint> read(FlinkRest rest, String jobId, long from, long to) {
    Map<String, String> names = new HashMap<>();
    for (JsonNode vertex : rest.get("/jobs/" + jobId).path("vertices")) {
      names.put(vertex.path("id").asText(), vertex.path("name").asText());
    }
    List<Checkpoint> checkpoints = new ArrayList<>();
    for (JsonNode c : rest.checkpoints(jobId).path("history")) {
      long triggered = c.path("trigger_timestamp").asLong();
      if (!"COMPLETED".equals(c.path("status").asText()) || triggered < from || triggered > to) {
        continue;
      }
      long id = c.path("id").asLong();
      String slowest = null;
      long slowestDuration = -1;
      var tasks = rest.checkpointDetails(jobId, id).path("tasks").fields();
      while (tasks.hasNext()) {
        var task = tasks.next();
        long duration = task.getValue().path("end_to_end_duration").asLong();
        if (duration > slowestDuration) {
          slowestDuration = duration;
          slowest = task.getKey();
        }
      }
      JsonNode summary =
          rest.get("/jobs/" + jobId + "/checkpoints/details/" + id + "/subtasks/" + slowest)
              .path("summary");
      checkpoints.add(
          new Checkpoint(
              id,
              (triggered - from) / 1000.0,
              c.path("end_to_end_duration").asLong(),
              names.getOrDefault(slowest, String.valueOf(slowest)),
              summary.path("checkpoint_duration").path("sync").path("max").asLong(),
              summary.path("checkpoint_duration").path("async").path("max").asLong(),
              summary.path("alignment").path("duration").path("max").asLong(),
              summary.path("start_delay").path("max").asLong()));
    }
    checkpoints.sort((a, b) -> Long.compare(a.id(), b.id()));
    return checkpoints;
  }

  static void print(PrintStream out, LiveClicks.Latency latency, List<Checkpoint> checkpoints) {
    Table t =
        new Table(
            "Checkpoints while live clicks were timed",
            "checkpoint",
            "triggered after (s)",
            "end to end (ms)",
            "slowest task",
            "its sync / async / alignment / start delay (ms, max over subtasks)");
    for (Checkpoint c : checkpoints) {
      t.row(
          c.id(),
          fmt(c.triggeredAfter(), 1),
          c.endToEndMs(),
          c.slowestTask().substring(0, Math.min(40, c.slowestTask().length())),
          c.syncMs() + " / " + c.asyncMs() + " / " + c.alignmentMs() + " / " + c.startDelayMs());
    }
    t.note(
        "The clicks that waited longest left "
            + fmt((latency.slowestSentAt() - latency.startedAt()) / 1000.0, 1)
            + " s after the timing began and waited "
            + fmt(latency.slowestMillis() / 1000.0, 2)
            + " s. A task's synchronous part holds its thread, and the records behind it; alignment"
            + " holds the channels whose barrier came first.");
    t.print(out);
  }
}
