package io.tally.launcher;

import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.TopicPartition;

/**
 * What the stack tests read from a running stack besides counts: the click job's committed offsets, the
 * checkpoint it restored (Flink's REST API, as the web UI shows it) and its reported event time.
 */
final class StackProbe {

  /** The click job's consumer group (ClickJobOptions' default, which ./tally up keeps). */
  static final String GROUP = "flink-click-job";
  /** A crawler's agent: its clicks count as bot clicks, apart from the human ones a test checks. */
  static final String BOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";

  private static final ObjectMapper JSON = new ObjectMapper();

  private StackProbe() {}

  /**
   * Waits until the click job has committed every click partition's end offset: Kafka offsets are
   * committed when a checkpoint completes, so a checkpoint then holds every click produced so far.
   */
  static void awaitClicksCheckpointed(String bootstrapServers) throws Exception {
    try (Admin admin = Admin.create(Map.<String, Object>of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers))) {
      Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
      admin.describeTopics(List.of(ClickTopics.CLICKS)).allTopicNames().get().get(ClickTopics.CLICKS)
          .partitions().forEach(p -> latest.put(new TopicPartition(ClickTopics.CLICKS, p.partition()), OffsetSpec.latest()));
      Map<TopicPartition, Long> ends = new HashMap<>();
      admin.listOffsets(latest).all().get().forEach((tp, info) -> ends.put(tp, info.offset()));
      // Generous: a checkpoint every 10 s, but a loaded 2-core machine can take minutes to start the job.
      await().atMost(Duration.ofSeconds(180)).pollInterval(Duration.ofMillis(500)).until(() -> {
        Map<TopicPartition, Long> committed = new HashMap<>();
        admin.listConsumerGroupOffsets(GROUP).partitionsToOffsetAndMetadata().get()
            .forEach((tp, offset) -> committed.put(tp, offset == null ? -1 : offset.offset()));
        return ends.entrySet().stream()
            .allMatch(end -> end.getValue() == 0 || end.getValue().equals(committed.get(end.getKey())));
      });
    }
  }

  /**
   * The external path of the checkpoint the running click job restored, or empty when it started
   * without state.
   */
  static Optional<String> restoredCheckpoint(String flinkUiUrl) throws Exception {
    // A job restores its checkpoint before it runs; right after a start it may still be on its way.
    String job = await("a running job at " + flinkUiUrl).atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500))
        .until(() -> runningJob(flinkUiUrl), Optional::isPresent).orElseThrow();
    JsonNode restored = get(flinkUiUrl + "/jobs/" + job + "/checkpoints").path("latest").path("restored");
    return restored.isMissingNode() || restored.isNull()
        ? Optional.empty()
        : Optional.of(restored.get("external_path").asText());
  }

  private static Optional<String> runningJob(String flinkUiUrl) throws Exception {
    for (JsonNode job : get(flinkUiUrl + "/jobs").get("jobs")) {
      if (job.get("status").asText().equals("RUNNING")) {
        return Optional.of(job.get("id").asText());
      }
    }
    return Optional.empty();
  }

  /** The end of the newest minute the job reports final ({@code stream_progress}), or the minimum before any. */
  static long closedBefore(String jdbcUrl) throws Exception {
    try (Connection c = DriverManager.getConnection(jdbcUrl, "postgres", "");
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT closed_before FROM stream_progress")) {
      return rs.next() ? rs.getTimestamp(1).getTime() : Long.MIN_VALUE;
    }
  }

  /**
   * Waits until fewer than {@code seconds} seconds of the current minute have passed, so that clicks made
   * now are in a minute that stays open for at least the rest of it.
   */
  static void awaitMinuteYoungerThan(int seconds) {
    await().atMost(Duration.ofSeconds(61)).pollInterval(Duration.ofMillis(200))
        .until(() -> System.currentTimeMillis() % 60_000 < seconds * 1000L);
  }

  /** The HTTP status of a GET of {@code url}. */
  static int status(String url) throws Exception {
    return HttpClient.newHttpClient()
        .send(HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.discarding())
        .statusCode();
  }

  private static JsonNode get(String url) throws Exception {
    HttpResponse<String> answer = HttpClient.newHttpClient()
        .send(HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.ofString());
    if (answer.statusCode() != 200) {
      throw new AssertionError("GET " + url + ": " + answer.statusCode() + " " + answer.body());
    }
    return JSON.readTree(answer.body());
  }
}
