package io.tally.launcher;

import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tally.event.ClickEvent;
import io.tally.local.ClickTopics;
import io.tally.testing.ClickEvents;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import java.util.UUID;
import java.util.stream.IntStream;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * What the stack tests read from a running stack besides counts: the click job's committed offsets,
 * the checkpoint it restored (Flink's REST API, as the web UI shows it) and its reported event
 * time; the marker clicks they write into every partition to know the job has read all before them;
 * and the odd records that make the job's dead-letter and duplicate counters move.
 */
final class StackProbe {

  private static final ObjectMapper JSON = new ObjectMapper();

  private StackProbe() {}

  /**
   * Waits until the running click job completes a checkpoint triggered after now. Call it once the
   * clicks are counted: the job has then read them, so a checkpoint taken later holds them (the
   * source's offsets past them, their windows, their ids in the dedup set). The consumer group's
   * committed offsets are no sign of this: Flink commits them after a checkpoint, on a best-effort
   * basis, and they were seen minutes behind the checkpoints on a loaded machine.
   */
  static void awaitCheckpointAfterNow(String flinkUiUrl) throws Exception {
    long now = System.currentTimeMillis();
    String job =
        runningJob(flinkUiUrl)
            .orElseThrow(() -> new AssertionError("no running job at " + flinkUiUrl));
    await("a checkpoint triggered after the clicks were counted")
        .atMost(Duration.ofSeconds(120))
        .pollInterval(Duration.ofMillis(500))
        .until(
            () ->
                get(flinkUiUrl + "/jobs/" + job + "/checkpoints")
                        .path("latest")
                        .path("completed")
                        .path("trigger_timestamp")
                        .asLong(0)
                    > now);
  }

  /**
   * The external path of the checkpoint the running click job restored, or empty when it started
   * without state.
   */
  static Optional<String> restoredCheckpoint(String flinkUiUrl) throws Exception {
    // A job restores its checkpoint before it runs; right after a start it may still be on its way.
    String job =
        await("a running job at " + flinkUiUrl)
            .atMost(Duration.ofSeconds(60))
            .pollInterval(Duration.ofMillis(500))
            .until(() -> runningJob(flinkUiUrl), Optional::isPresent)
            .orElseThrow();
    JsonNode restored =
        get(flinkUiUrl + "/jobs/" + job + "/checkpoints").path("latest").path("restored");
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

  /**
   * The end of the newest minute the job reports final ({@code stream_progress}), or the minimum
   * before any.
   */
  static long closedBefore(String jdbcUrl) throws Exception {
    try (Connection c = DriverManager.getConnection(jdbcUrl, "postgres", "");
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT closed_before FROM stream_progress")) {
      return rs.next() ? rs.getTimestamp(1).getTime() : Long.MIN_VALUE;
    }
  }

  /**
   * Waits until fewer than {@code seconds} seconds of the current minute have passed, so that
   * clicks made now are in a minute that stays open for at least the rest of it.
   */
  static void awaitMinuteYoungerThan(int seconds) {
    await()
        .atMost(Duration.ofSeconds(61))
        .pollInterval(Duration.ofMillis(200))
        .until(() -> System.currentTimeMillis() % 60_000 < seconds * 1000L);
  }

  /** A producer of click records as redirect-web's, acks from every replica. */
  static KafkaProducer<String, byte[]> producer(String bootstrapServers) {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
    p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
    return new KafkaProducer<>(p);
  }

  /** {@code n} human clicks on {@code code}, stamped now, each with an id of its own. */
  static List<ClickEvent> humanClicksNow(String code, int n) {
    return humanClicks(code, n, System.currentTimeMillis());
  }

  /** {@code n} human clicks on {@code code}, stamped {@code ts}, each with an id of its own. */
  static List<ClickEvent> humanClicks(String code, int n, long ts) {
    return IntStream.range(0, n)
        .mapToObj(i -> ClickEvents.minimal(UUID.randomUUID(), code, ts, false))
        .toList();
  }

  /**
   * Writes the clicks over every partition in turn, so that every source subtask has some to read.
   */
  static void sendOverEveryPartition(String bootstrapServers, List<ClickEvent> clicks) {
    try (KafkaProducer<String, byte[]> producer = producer(bootstrapServers)) {
      int partitions = producer.partitionsFor(ClickTopics.CLICKS).size();
      for (int i = 0; i < clicks.size(); i++) {
        producer.send(ClickEvents.inPartition(ClickTopics.CLICKS, i % partitions, clicks.get(i)));
      }
      producer.flush();
    }
  }

  /**
   * The sum of {@code column} ({@code clicks}, {@code bot_clicks} ...) over the link's minute rows.
   */
  static long minuteTotal(String jdbcUrl, String code, String column) throws Exception {
    try (Connection c = DriverManager.getConnection(jdbcUrl, "postgres", "");
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT COALESCE(sum(" + column + "), 0) FROM click_counts WHERE code = ?")) {
      ps.setString(1, code);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  /**
   * Writes one bot click on {@code code}, stamped now, into every partition of the click topic and
   * returns how many it wrote. A link's clicks may sit in any partition, and the job reads each
   * partition in order: once it has counted every one of these, it has read every click written
   * before them, replays included.
   */
  static int botClickInEveryPartition(String bootstrapServers, String code) {
    try (KafkaProducer<String, byte[]> producer = producer(bootstrapServers)) {
      int partitions = producer.partitionsFor(ClickTopics.CLICKS).size();
      long now = System.currentTimeMillis();
      for (int partition = 0; partition < partitions; partition++) {
        ClickEvent bot = ClickEvents.minimal(UUID.randomUUID(), code, now, true);
        producer.send(ClickEvents.inPartition(ClickTopics.CLICKS, partition, bot));
      }
      producer.flush();
      return partitions;
    }
  }

  /**
   * Writes into partition 0 of the click topic what the job's dead letters and duplicate counters
   * are for: one click on {@code code} twice (the second a duplicate), a record that is not JSON, a
   * click stamped {@code lateTs} (late once the job's watermark has passed its minute and the
   * allowed lateness: wait for that first), and a click stamped now, so that the partition's own
   * watermark moves on at once.
   */
  static void duplicateMalformedAndLateClicks(String bootstrapServers, String code, long lateTs) {
    try (KafkaProducer<String, byte[]> producer = producer(bootstrapServers)) {
      long now = System.currentTimeMillis();
      ClickEvent twice = ClickEvents.minimal(UUID.randomUUID(), code, now, false);
      producer.send(ClickEvents.inPartition(ClickTopics.CLICKS, 0, twice));
      producer.send(ClickEvents.inPartition(ClickTopics.CLICKS, 0, twice));
      producer.send(
          new ProducerRecord<>(
              ClickTopics.CLICKS, 0, null, "not a click".getBytes(StandardCharsets.UTF_8)));
      ClickEvent late = ClickEvents.minimal(UUID.randomUUID(), code, lateTs, false);
      producer.send(ClickEvents.inPartition(ClickTopics.CLICKS, 0, late));
      ClickEvent current = ClickEvents.minimal(UUID.randomUUID(), code, now, false);
      producer.send(ClickEvents.inPartition(ClickTopics.CLICKS, 0, current));
      producer.flush();
    }
  }

  /** The body of a GET of {@code url}, which must answer 200. */
  static String text(String url) throws Exception {
    HttpResponse<String> answer =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(URI.create(url)).build(),
                HttpResponse.BodyHandlers.ofString());
    if (answer.statusCode() != 200) {
      throw new AssertionError("GET " + url + ": " + answer.statusCode());
    }
    return answer.body();
  }

  /** The HTTP status of a GET of {@code url}. */
  static int status(String url) throws Exception {
    return HttpClient.newHttpClient()
        .send(
            HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.discarding())
        .statusCode();
  }

  /** A GET of {@code url} that must answer 200 with JSON, such as Flink's REST API. */
  static JsonNode get(String url) throws Exception {
    HttpResponse<String> answer =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(URI.create(url)).build(),
                HttpResponse.BodyHandlers.ofString());
    if (answer.statusCode() != 200) {
      throw new AssertionError("GET " + url + ": " + answer.statusCode() + " " + answer.body());
    }
    return JSON.readTree(answer.body());
  }
}
