package io.tally.bench.pipeline;

import static io.tally.testing.Table.fmt;

import com.fasterxml.jackson.databind.JsonNode;
import io.tally.local.FlinkRest;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Busy, backpressured and records-in figures of a running job's subtasks, as the web UI shows them.
 */
final class SubtaskLoad {

  private SubtaskLoad() {}

  /**
   * How the load falls on the subtasks, from Flink's REST API halfway through the backlog: the
   * dedup input per subtask (Zipf keys make it uneven), and how busy and how backpressured the
   * tasks are. The same figures the web UI shows; "–" where the metric fetcher has none yet.
   */
  static List<String> read(FlinkRest rest, String jobId, String dedup) {
    String source = rest.vertexId(jobId, "Click topic");
    String skew =
        rest.vertexMetricSpread(jobId, dedup, "numRecordsIn")
            .map(
                v ->
                    fmt(v.path("min").asDouble(), 0)
                        + " / "
                        + fmt(v.path("max").asDouble(), 0)
                        + " ("
                        + fmt(v.path("max").asDouble() / v.path("avg").asDouble(), 2)
                        + ")")
            .orElse("–");
    String busy =
        avgAndMax(rest.vertexMetricSpread(jobId, source, "busyTimeMsPerSecond"))
            + "; "
            + avgAndMax(rest.vertexMetricSpread(jobId, dedup, "busyTimeMsPerSecond"));
    String backpressured =
        avgAndMax(rest.vertexMetricSpread(jobId, source, "backPressuredTimeMsPerSecond"));
    List<String> tasks = new ArrayList<>();
    for (JsonNode vertex : rest.get("/jobs/" + jobId).path("vertices")) {
      String name = vertex.path("name").asText();
      String id = vertex.path("id").asText();
      tasks.add(
          name.substring(0, Math.min(name.length(), 28))
              + " "
              + busy(rest, jobId, id)
              + "/"
              + avgOnly(rest.vertexMetricSpread(jobId, id, "backPressuredTimeMsPerSecond")));
    }
    return List.of(skew, busy, backpressured, String.join("; ", tasks));
  }

  private static String avgAndMax(Optional<JsonNode> spread) {
    return spread
        .map(v -> fmt(v.path("avg").asDouble(), 0) + " / " + fmt(v.path("max").asDouble(), 0))
        .orElse("–");
  }

  /** A vertex's busy ms/s, the average over its subtasks. */
  static String busy(FlinkRest rest, String jobId, String vertexId) {
    return avgOnly(rest.vertexMetricSpread(jobId, vertexId, "busyTimeMsPerSecond"));
  }

  private static String avgOnly(Optional<JsonNode> spread) {
    return spread.map(v -> fmt(v.path("avg").asDouble(), 0)).orElse("–");
  }
}
