package io.tally.clickjob;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tally.counting.records.DimensionCount;
import io.tally.event.ClickEvent;
import io.tally.event.ClickRecords;
import io.tally.event.MalformedReason;
import io.tally.testing.ClickEvents;
import io.tally.testing.ClickOracle;
import io.tally.testing.KafkaExtension;
import io.tally.testing.PostgresExtension;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.checkpoint.RestoredCheckpointStats;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.InjectMiniCluster;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The whole click job on a MiniCluster at parallelism 2 with a real Kafka broker and PostgreSQL: a
 * stream with known ground truth ends with the minute counts, hour and day totals, unique visitors
 * and hourly breakdowns equal to it exactly, and every malformed or too-late record in the
 * dead-letter topic with its reason, also when a TaskManager dies mid-stream and the job restores
 * from a checkpoint in mid-hour, and when the job is cancelled and started again without its state
 * while windows are open.
 */
class ClickCountJobITCase {

  @RegisterExtension static final KafkaExtension KAFKA = new KafkaExtension();
  @RegisterExtension static final PostgresExtension POSTGRES = new PostgresExtension();

  @RegisterExtension
  static final MiniClusterExtension FLINK =
      new MiniClusterExtension(
          new MiniClusterResourceConfiguration.Builder()
              .setNumberTaskManagers(1)
              .setNumberSlotsPerTaskManager(2)
              .build());

  private static final int PARTITIONS = 4;
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path checkpoints;
  private String topic;
  private String dlqTopic;
  private String groupId;
  private KafkaProducer<String, byte[]> producer;
  private JobClient job;

  @BeforeEach
  void setUp() {
    topic = KAFKA.newTopic("clicks", PARTITIONS);
    dlqTopic = KAFKA.newTopic("clicks-dlq", 1);
    groupId = "it-" + UUID.randomUUID();
    POSTGRES.truncateAll();
    producer = KAFKA.producer();
  }

  @AfterEach
  void tearDown() throws Exception {
    if (job != null) {
      cancelAndAwait(job);
    }
    producer.close();
  }

  /**
   * Cancels a job and waits until it has stopped: a cancel is only requested when {@code cancel()}
   * returns, and a job still shutting down keeps writing checkpoint files into the test's temporary
   * folder and holds the cluster's slots.
   */
  private static void cancelAndAwait(JobClient job) throws Exception {
    job.cancel().get();
    await()
        .atMost(Duration.ofSeconds(60))
        .until(() -> job.getJobStatus().get().isGloballyTerminalState());
  }

  @Test
  void countsAndAggregatesEqualTheGroundTruthAndEveryBadRecordIsDeadLettered() throws Exception {
    GroundTruth truth = new GroundTruth(System.currentTimeMillis(), 42);
    job = startJob(NO_WALL_CLOCK);

    produce(truth.onTime);

    finishAndCheck(truth);
    await("each link's copies and late clicks in its ledger")
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () ->
                assertThat(
                        rows(
                            "SELECT code || '@' || (extract(epoch FROM hour) * 1000)::bigint,"
                                + " duplicates, late, refused_rows FROM link_ledger_hourly WHERE"
                                + " code NOT LIKE 'flush-%'"))
                    .isEqualTo(truth.ledger()));
  }

  @Test
  void aTaskManagerLostMidStreamNeitherLosesNorDoublesAClick(@InjectMiniCluster MiniCluster cluster)
      throws Exception {
    GroundTruth truth = new GroundTruth(System.currentTimeMillis(), 7);
    job = startJob(NO_WALL_CLOCK);
    int half = truth.onTime.size() / 2;

    produce(truth.onTime.subList(0, half));
    // Offsets are committed when a checkpoint completes: one holds the state of the whole first
    // half.
    awaitOffsetsCommittedToTheEnd();
    produce(truth.onTime.subList(half, half + 100));
    // The TaskManager dies with windows open, dedup state and uncommitted offsets in flight; the
    // job restarts on a new one from the last checkpoint and replays from that checkpoint's
    // offsets.
    cluster.terminateTaskManager(0).get();
    cluster.startTaskManager();
    produce(truth.onTime.subList(half + 100, truth.onTime.size()));
    finishAndCheck(truth);
    // Else a restart without state would pass too: it recounts the day (RewindToOpenDay).
    assertThat(restoredCheckpoint(cluster)).as("the job restored a checkpoint").isNotNull();
  }

  @Test
  void aJobStartedWithoutItsStateRecountsTheMinutesHoursAndDaysOpenAtItsCommittedOffsets(
      @InjectMiniCluster MiniCluster cluster) throws Exception {
    GroundTruth truth = new GroundTruth(System.currentTimeMillis(), 13);
    job = startJob(NO_WALL_CLOCK);
    List<GroundTruth.Record> before = truth.onTime.subList(0, truth.onTime.size() / 2);
    produce(before);
    awaitOffsetsCommittedToTheEnd();
    long newestMinute =
        before.stream().mapToLong(GroundTruth.Record::ts).max().orElseThrow()
            / GroundTruth.MINUTE
            * GroundTruth.MINUTE;
    assertThat(closedBefore())
        .as("the newest clicks' minute is open at the commit")
        .isLessThanOrEqualTo(newestMinute);
    cancelAndAwait(job);

    // Same consumer group, no checkpoint or savepoint: its committed offsets are all the job has.
    job = startJob(NO_WALL_CLOCK);
    produce(truth.onTime.subList(before.size(), truth.onTime.size()));

    finishAndCheck(truth);
    assertThat(restoredCheckpoint(cluster)).as("the second job started without state").isNull();
  }

  @Test
  void aBacklogWhoseReadingPausesForLongerThanTheIdleTimeoutIsCountedNotDeadLettered()
      throws Exception {
    // As after a restart on a backlog of 40-minute-old clicks: the job starts on its first part,
    // then gets nothing new for twice the idle timeout, as when backpressure stops its sources,
    // then the rest. No watermark may follow the wall clock meanwhile, or the rest of the backlog
    // would be late.
    GroundTruth truth = new GroundTruth(System.currentTimeMillis(), 11);
    Duration idleTimeout = Duration.ofSeconds(5);
    int firstPart = truth.onTime.size() / 2;
    produce(truth.onTime.subList(0, firstPart));
    job = startJob(idleTimeout);
    awaitMinuteWritten(truth, 3);
    long firstPartEnd =
        truth.onTime.subList(0, firstPart).stream()
            .mapToLong(GroundTruth.Record::ts)
            .max()
            .orElseThrow();
    // Twice the idle timeout with nothing new, all the while reporting no progress past the clicks
    // read.
    await("no progress past the clicks read during the pause")
        .during(idleTimeout.multipliedBy(2))
        .atMost(idleTimeout.multipliedBy(3))
        .pollInterval(Duration.ofMillis(250))
        .until(() -> closedBefore() <= firstPartEnd);

    produce(truth.onTime.subList(firstPart, truth.onTime.size()));

    finishAndCheck(truth);
  }

  @Test
  void aRowPostgresRefusesIsDeadLetteredWhileTheJobCountsOnWithoutARestart() throws Exception {
    // A later migration that refuses a value the job already counts.
    execute("ALTER TABLE click_dimensions_hourly ADD CONSTRAINT no_fr CHECK (value <> 'FR')");
    try {
      job = startJob(Duration.ofSeconds(2), false);
      long now = System.currentTimeMillis();
      for (int i = 0; i < 10; i++) {
        producer.send(
            ClickRecords.of(
                topic,
                ClickEvent.builder(UUID.randomUUID(), "refusal", now - 1000 + i)
                    .userAgent(ClickEvents.DESKTOP_BROWSER)
                    .country(i < 6 ? "DE" : "FR")
                    .build()));
      }
      producer.flush();
      long hour = now - now % 3_600_000L;
      String standIn = new DimensionCount("refusal", hour, "country", "FR", 4).standIn().value();

      await()
          .atMost(Duration.ofSeconds(90))
          .pollInterval(Duration.ofSeconds(1))
          .untilAsserted(
              () ->
                  assertThat(
                          rows(
                              "SELECT value, clicks FROM click_dimensions_hourly WHERE code ="
                                  + " 'refusal' AND dimension = 'country'"))
                      .as("the link's countries add up to its clicks")
                      .isEqualTo(Map.of("DE", List.of(6L), standIn, List.of(4L))));
      assertThat(rows("SELECT code, clicks FROM click_hourly WHERE code = 'refusal'"))
          .isEqualTo(Map.of("refusal", List.of(10L)));
      await()
          .atMost(Duration.ofSeconds(30))
          .untilAsserted(
              () ->
                  assertThat(readDeadLetters())
                      .filteredOn(l -> l.get("reason").asText().equals("refused_row"))
                      .isNotEmpty()
                      .allSatisfy(
                          letter -> {
                            assertThat(letter.get("table").asText())
                                .isEqualTo("click_dimensions_hourly");
                            assertThat(letter.get("detail").asText()).startsWith("23514 ");
                            assertThat(letter.at("/row/value").asText()).isEqualTo("FR");
                          }));
      await("the refused row in its link's ledger")
          .atMost(Duration.ofSeconds(30))
          .untilAsserted(
              () ->
                  assertThat(
                          rows("SELECT code, refused_rows FROM link_ledger_hourly WHERE code ="
                                  + " 'refusal'")
                              .get("refusal"))
                      .isNotNull()
                      .first()
                      .isNotEqualTo(0L));
      // Without restarts allowed, a failure would have ended the job.
      assertThat(job.getJobStatus().get()).isEqualTo(JobStatus.RUNNING);
    } finally {
      execute("ALTER TABLE click_dimensions_hourly DROP CONSTRAINT no_fr");
    }
  }

  /**
   * Once every on-time click is counted up to minute 8: the late clicks (within and beyond the
   * lateness), then a push of every watermark past all minutes, then the table and the dead
   * letters.
   */
  private void finishAndCheck(GroundTruth truth) throws Exception {
    awaitMinuteWritten(truth, 8);
    produce(truth.lateWithinLateness);
    produce(truth.tooLate);
    flushAllPartitions();

    awaitCountsEqual(truth);
    assertDeadLetters(truth);
    assertAggregatesEqual(truth);
    assertProgressPassed(truth.base + GroundTruth.MINUTES * GroundTruth.MINUTE);
  }

  private static void assertAggregatesEqual(GroundTruth truth) {
    // The minutes are final; the clicks are 30-40 minutes old, a backlog, so an hour or day still
    // open is written at the next 30-second flush (LiveOrBacklog), a closed one when it was
    // dropped.
    await()
        .atMost(Duration.ofSeconds(90))
        .pollInterval(Duration.ofSeconds(1))
        .untilAsserted(
            () -> {
              assertThat(
                      rows(
                          "SELECT code || '@' || (extract(epoch FROM hour) * 1000)::bigint, clicks,"
                              + " bot_clicks, visitors FROM click_hourly WHERE code NOT LIKE"
                              + " 'flush-%'"))
                  .isEqualTo(lists(truth.oracle.hours()));
              assertThat(
                      rows(
                          "SELECT code || '@' || (extract(epoch FROM day::timestamp AT TIME ZONE"
                              + " 'UTC') * 1000)::bigint, clicks, bot_clicks, visitors FROM"
                              + " click_daily WHERE code NOT LIKE 'flush-%'"))
                  .isEqualTo(lists(truth.oracle.days()));
              Map<String, String> sketches = POSTGRES.texts(ClickOracle.STORED_DAY_SKETCHES);
              assertThat(sketches).isNotEmpty();
              assertThat(truth.oracle.daySketchMismatches(sketches)).isEmpty();
              Map<String, List<Long>> dimensions = new HashMap<>();
              truth
                  .oracle
                  .dimensions()
                  .forEach((key, clicks) -> dimensions.put(key, List.of(clicks)));
              assertThat(
                      rows(
                          "SELECT code || '@' || (extract(epoch FROM hour) * 1000)::bigint || '@'"
                              + " || dimension || '@' || value, clicks FROM click_dimensions_hourly"
                              + " WHERE code NOT LIKE 'flush-%'"))
                  .isEqualTo(dimensions);
              Map<String, List<Long>> dayDimensions = new HashMap<>();
              truth
                  .oracle
                  .dayDimensions()
                  .forEach((key, clicks) -> dayDimensions.put(key, List.of(clicks)));
              assertThat(
                      rows(
                          "SELECT code || '@' || (extract(epoch FROM day::timestamp AT TIME ZONE"
                              + " 'UTC') * 1000)::bigint || '@' || dimension || '@' || value,"
                              + " clicks FROM click_dimensions_daily WHERE code NOT LIKE"
                              + " 'flush-%'"))
                  .isEqualTo(dayDimensions);
            });
  }

  private static void assertProgressPassed(long instant) throws Exception {
    try (Connection c = POSTGRES.connect();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT closed_before FROM stream_progress WHERE job = '"
                    + ClickCountJob.JOB_NAME
                    + "'")) {
      assertThat(rs.next()).as("the job reported its event-time progress").isTrue();
      assertThat(rs.getTimestamp(1).getTime()).isGreaterThanOrEqualTo(instant);
    }
  }

  private static Map<String, List<Long>> lists(Map<String, long[]> totals) {
    Map<String, List<Long>> lists = new HashMap<>();
    totals.forEach((key, t) -> lists.put(key, java.util.Arrays.stream(t).boxed().toList()));
    return lists;
  }

  private static void execute(String sql) throws Exception {
    try (Connection db = POSTGRES.connect();
        Statement statement = db.createStatement()) {
      statement.execute(sql);
    }
  }

  private static Map<String, List<Long>> rows(String sql) {
    return POSTGRES.rows(sql);
  }

  /** An idle timeout longer than any test: watermarks come from the generated clicks alone. */
  private static final Duration NO_WALL_CLOCK = Duration.ofHours(1);

  private JobClient startJob(Duration idleTimeout) throws Exception {
    return startJob(idleTimeout, true);
  }

  private JobClient startJob(Duration idleTimeout, boolean restarts) throws Exception {
    ClickJobOptions options =
        ClickJobArgs.connectedTo(
            KAFKA,
            POSTGRES,
            topic,
            dlqTopic,
            groupId,
            "--allowed-lateness",
            "2m",
            "--out-of-orderness",
            "5s",
            "--idle-timeout",
            idleTimeout.toMillis() + "ms",
            "--checkpoint-interval",
            "1s",
            "--checkpoint-dir",
            checkpoints.toUri().toString(),
            "--parallelism",
            "2");
    Configuration conf = ClickCountJob.configuration(options);
    if (!restarts) {
      conf.setString("restart-strategy.type", "none");
    }
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    ClickCountJob.build(env, options);
    return env.executeAsync(ClickCountJob.JOB_NAME);
  }

  private void produce(List<GroundTruth.Record> records) {
    GroundTruth.produce(producer, topic, records);
  }

  private void flushAllPartitions() {
    GroundTruth.flushPartitions(producer, topic, PARTITIONS);
  }

  /**
   * Waits until the job reports the minute closed: the watermark passed it in every subtask. (A row
   * for the minute proves nothing since open minutes fire early.)
   */
  private void awaitMinuteWritten(GroundTruth truth, int minute) {
    long minuteEnd = truth.base + (minute + 1) * GroundTruth.MINUTE;
    await()
        .atMost(Duration.ofSeconds(120))
        .pollInterval(Duration.ofMillis(500))
        .until(() -> closedBefore() >= minuteEnd);
  }

  /**
   * Waits until the job's consumer group has committed every partition's end: a checkpoint holds it
   * all.
   */
  private void awaitOffsetsCommittedToTheEnd() throws Exception {
    KAFKA.awaitCommittedToTheEnd(topic, groupId, Duration.ofSeconds(60));
  }

  /** The checkpoint the running job restored, or null when it started without state. */
  private RestoredCheckpointStats restoredCheckpoint(MiniCluster cluster) throws Exception {
    return cluster
        .getExecutionGraph(job.getJobID())
        .get()
        .getCheckpointStatsSnapshot()
        .getLatestRestoredCheckpoint();
  }

  /**
   * The job's reported event time ({@code stream_progress}), or the minimum before its first
   * report.
   */
  private static long closedBefore() throws Exception {
    try (Connection c = POSTGRES.connect();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT closed_before FROM stream_progress")) {
      return rs.next() ? rs.getTimestamp(1).getTime() : Long.MIN_VALUE;
    }
  }

  private void awaitCountsEqual(GroundTruth truth) {
    await()
        .atMost(Duration.ofSeconds(120))
        .pollInterval(Duration.ofSeconds(1))
        .untilAsserted(() -> assertThat(table()).isEqualTo(expected(truth)));
  }

  private static Map<String, List<Long>> expected(GroundTruth truth) {
    Map<String, List<Long>> expected = new HashMap<>();
    truth
        .oracle
        .minutes()
        .forEach((key, totals) -> expected.put(key, List.of(totals[0], totals[1])));
    return expected;
  }

  private static Map<String, List<Long>> table() throws Exception {
    Map<String, List<Long>> rows = new HashMap<>();
    try (Connection c = POSTGRES.connect();
        Statement s = c.createStatement();
        // The flush clicks' own minute closes too once their partitions follow the wall clock; it
        // is not part of the ground truth.
        ResultSet rs =
            s.executeQuery(
                "SELECT code, minute, clicks, bot_clicks FROM click_counts WHERE code NOT LIKE"
                    + " 'flush-%'")) {
      while (rs.next()) {
        rows.put(
            rs.getString(1) + "@" + rs.getTimestamp(2).getTime(),
            List.of(rs.getLong(3), rs.getLong(4)));
      }
    }
    return rows;
  }

  private void assertDeadLetters(GroundTruth truth) throws Exception {
    Map<String, List<JsonNode>> byReason = new HashMap<>();
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () -> {
              byReason.clear();
              for (JsonNode letter : readDeadLetters()) {
                byReason
                    .computeIfAbsent(letter.get("reason").asText(), r -> new ArrayList<>())
                    .add(letter);
              }
              assertThat(byReason.keySet())
                  .containsAll(
                      truth.malformed.keySet().stream().map(MalformedReason::label).toList());
              assertThat(byReason.get("late")).hasSizeGreaterThanOrEqualTo(truth.tooLate.size());
            });
    for (Map.Entry<MalformedReason, GroundTruth.Record> bad : truth.malformed.entrySet()) {
      JsonNode letter = byReason.get(bad.getKey().label()).get(0);
      // An oversized record's letter keeps its first bytes only; every other record's letter keeps
      // it whole.
      byte[] value = bad.getValue().value();
      assertThat(Base64.getDecoder().decode(letter.get("raw_base64").asText()))
          .isEqualTo(
              java.util.Arrays.copyOf(
                  value, Math.min(value.length, io.tally.event.ClickEventCodec.MAX_EVENT_BYTES)));
      assertThat(letter.get("source_topic").asText()).isEqualTo(topic);
      assertThat(letter.get("source_offset").asLong()).isNotNegative();
    }
    // At-least-once: a restart may write a dead letter twice, but never a late click that was
    // counted.
    List<String> lateClicks =
        byReason.get("late").stream()
            .map(
                l ->
                    new String(
                        Base64.getDecoder().decode(l.get("raw_base64").asText()),
                        java.nio.charset.StandardCharsets.UTF_8))
            .distinct()
            .toList();
    assertThat(lateClicks)
        .as("distinct late clicks (base %d)", truth.base)
        .hasSize(truth.tooLate.size());
  }

  /** Every dead letter written so far. */
  private List<JsonNode> readDeadLetters() throws Exception {
    List<JsonNode> letters = new ArrayList<>();
    for (byte[] letter : KAFKA.values(dlqTopic)) {
      letters.add(JSON.readTree(letter));
    }
    return letters;
  }
}
