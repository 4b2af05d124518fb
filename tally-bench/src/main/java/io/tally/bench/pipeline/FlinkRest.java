package io.tally.bench.pipeline;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Optional;

/** The few calls of Flink's REST API the pipeline benchmark and the chaos scenarios read: job vertices, their metrics, checkpoints. */
public final class FlinkRest {

  private static final ObjectMapper JSON = new ObjectMapper();

  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private final String base;

  public FlinkRest(int port) {
    this.base = "http://localhost:" + port;
  }

  public JsonNode get(String path) {
    try {
      HttpResponse<String> response = http.send(
          HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(10)).build(),
          HttpResponse.BodyHandlers.ofString());
      if (response.statusCode() != 200) {
        throw new IllegalStateException("GET " + path + " answered " + response.statusCode() + ": " + response.body());
      }
      return JSON.readTree(response.body());
    } catch (IOException e) {
      throw new UncheckedIOException("GET " + path, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** The id of the job vertex whose name contains {@code part}. */
  public String vertexId(String jobId, String part) {
    for (JsonNode vertex : get("/jobs/" + jobId).path("vertices")) {
      if (vertex.path("name").asText().contains(part)) {
        return vertex.path("id").asText();
      }
    }
    throw new IllegalStateException("no vertex named like '" + part + "' in job " + jobId);
  }

  /** A metric of a vertex, summed over its subtasks; empty until the metric fetcher has it. */
  public Optional<Double> vertexMetricSum(String jobId, String vertexId, String metric) {
    JsonNode values = get("/jobs/" + jobId + "/vertices/" + vertexId + "/subtasks/metrics?get=" + metric + "&agg=sum");
    for (JsonNode value : values) {
      if (value.path("id").asText().equals(metric) && value.has("sum")) {
        return Optional.of(value.path("sum").asDouble());
      }
    }
    return Optional.empty();
  }

  /**
   * A metric of a vertex over its subtasks as {@code min}, {@code max} and {@code avg}; empty until the
   * metric fetcher has it.
   */
  Optional<JsonNode> vertexMetricSpread(String jobId, String vertexId, String metric) {
    JsonNode values = get("/jobs/" + jobId + "/vertices/" + vertexId + "/subtasks/metrics?get=" + metric + "&agg=min,max,avg");
    for (JsonNode value : values) {
      if (value.path("id").asText().equals(metric) && value.has("max")) {
        return Optional.of(value);
      }
    }
    return Optional.empty();
  }

  public JsonNode checkpoints(String jobId) {
    return get("/jobs/" + jobId + "/checkpoints");
  }

  JsonNode checkpointDetails(String jobId, long checkpointId) {
    return get("/jobs/" + jobId + "/checkpoints/details/" + checkpointId);
  }
}
