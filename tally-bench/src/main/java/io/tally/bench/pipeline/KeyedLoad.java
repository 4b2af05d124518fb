package io.tally.bench.pipeline;

import static io.tally.testing.Table.fmt;

import com.fasterxml.jackson.databind.JsonNode;
import io.tally.local.FlinkRest;
import io.tally.testing.Table;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;

/** One keyed vertex's records in, per subtask: how evenly the keys spread the load. */
record KeyedLoad(String vertex, long[] recordsIn) {

  /**
   * Records in per subtask of every keyed vertex (those behind a hash shuffle), once the topic is
   * read.
   */
  static List<KeyedLoad> read(FlinkRest rest, String jobId) {
    List<KeyedLoad> loads = new ArrayList<>();
    JsonNode plan = rest.get("/jobs/" + jobId + "/plan").path("plan").path("nodes");
    for (JsonNode node : plan) {
      boolean keyed = false;
      for (JsonNode input : node.path("inputs")) {
        keyed |= input.path("ship_strategy").asText().equals("HASH");
      }
      if (!keyed) {
        continue;
      }
      String vertex = node.path("id").asText();
      int parallelism = node.path("parallelism").asInt();
      long[] in = new long[parallelism];
      for (int i = 0; i < parallelism; i++) {
        String subtask = "/jobs/" + jobId + "/vertices/" + vertex + "/subtasks/" + i;
        JsonNode metrics = rest.get(subtask + "/metrics?get=numRecordsIn");
        for (JsonNode m : metrics) {
          in[i] = (long) m.path("value").asDouble();
        }
      }
      loads.add(new KeyedLoad(shortName(node.path("description").asText()), in));
    }
    return loads;
  }

  private static String shortName(String description) {
    String plain = description.replaceAll("<[^>]*>", "").replace("&gt;", ">").trim();
    return plain.length() > 60 ? plain.substring(0, 57) + "..." : plain;
  }

  double skew() {
    return skew(recordsIn);
  }

  String describe() {
    return Arrays.stream(recordsIn).mapToObj(Table::count).collect(Collectors.joining(" / "))
        + " ("
        + fmt(skew(), 3)
        + ")";
  }

  /** Max over mean of the records every keyed vertex took in, per subtask. */
  static double skewOfTotal(List<KeyedLoad> loads) {
    int subtasks = loads.stream().mapToInt(l -> l.recordsIn.length).max().orElse(0);
    long[] total = new long[subtasks];
    for (KeyedLoad load : loads) {
      for (int i = 0; i < load.recordsIn.length; i++) {
        total[i] += load.recordsIn[i];
      }
    }
    return skew(total);
  }

  static double skew(long[] values) {
    double mean = Arrays.stream(values).average().orElse(0);
    return mean == 0 ? Double.NaN : Arrays.stream(values).max().getAsLong() / mean;
  }
}
