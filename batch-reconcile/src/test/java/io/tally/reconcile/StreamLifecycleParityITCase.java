package io.tally.reconcile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.tally.clickjob.ClickCountJob;
import io.tally.clickjob.ClickJobArgs;
import io.tally.clickjob.ClickJobOptions;
import io.tally.clickjob.GroundTruth;
import io.tally.testing.ClickOracle;
import io.tally.testing.KafkaExtension;
import io.tally.testing.PostgresExtension;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.jobgraph.SavepointRestoreSettings;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.graph.StreamGraph;
import org.apache.flink.test.junit5.InjectMiniCluster;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The streaming job counts a stream exactly through the life a deployment gives it, on the live
 * path's settings (5 s of out-of-orderness, 20 s idle timeout, 2 s early writes): the generated
 * clicks of the job's tests (out of order, 5% delivered twice, every kind of bot, version-1 events,
 * late clicks within the lateness) with a flood of referrer hosts on one link, sent in four parts
 * with a lifecycle event between each: a TaskManager killed mid-flood and the job restored from its
 * checkpoint; a stop with a savepoint and a resume after a stop longer than every state TTL
 * (shortened to two minutes of running time for the test) on one subtask; a stop and a resume on
 * two again; and an upgrade started without state whose classifier counts one browser's agent as a
 * crawler, while a reconciliation races its recount. Copies of clicks and returning visitors fall
 * on both sides of every event. Every table ends as the oracle of the new classifier says, a
 * flooded group's values those of least rank: the upgrade recounted the day whole and replaced what
 * the earlier runs wrote. Then a reconciliation of the range, with the same classifier, finds
 * nothing to repair.
 *
 * <p>The clicks are of the last hour: in the first hour of a UTC day some are of the day before,
 * which the upgrade does not recount, and the test is skipped.
 */
class StreamLifecycleParityITCase {

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
  private static final int MAX_VALUES = 20;
  private static final long DAY = 86_400_000L;

  /** What the upgrade's classifier counts as a crawler: Samsung Internet's agent, a person's. */
  private static final String CRAWLER_AGENT = "samsungbrowser";

  /** Longer than the test runs, stops left out, so that only a stop could outlast it. */
  private static final Duration STATE_TTL = Duration.ofSeconds(120);

  @TempDir Path checkpoints;
  @TempDir Path savepoints;

  private String topic;
  private String groupId;
  private KafkaProducer<String, byte[]> producer;
  private JobClient job;

  @BeforeEach
  void setUp() {
    POSTGRES.truncateAll();
    topic = KAFKA.newTopic("clicks", PARTITIONS);
    groupId = "lifecycle-" + UUID.randomUUID();
    producer = KAFKA.producer();
  }

  @AfterEach
  void tearDown() throws Exception {
    if (job != null && !job.getJobStatus().get().isGloballyTerminalState()) {
      job.cancel().get();
    }
    producer.close();
  }

  @Test
  void everyTableHoldsWhatTheOracleSaysThroughAKillAStopLongerThanTheTtlAndRescales(
      @InjectMiniCluster MiniCluster cluster) throws Exception {
    long now = System.currentTimeMillis();
    GroundTruth truth = new GroundTruth(now, 17);
    assumeTrue(
        Math.floorDiv(truth.base, DAY) == Math.floorDiv(now + 10 * 60_000, DAY),
        "every click of the test is of the day the upgrade recounts");
    truth.floodReferrers("alpha", 3 * MAX_VALUES, 5);
    List<GroundTruth.Record> clicks = truth.onTime;
    int fifth = clicks.size() / 5;

    job = start(null, 2);
    produce(clicks.subList(0, fifth));
    KAFKA.awaitCommittedToTheEnd(topic, groupId, Duration.ofSeconds(60));
    // Killed with the flood's minute open and clicks after the last checkpoint in flight.
    produce(clicks.subList(fifth, fifth + fifth / 2));
    cluster.terminateTaskManager(0).get();
    cluster.startTaskManager();
    produce(clicks.subList(fifth + fifth / 2, 2 * fifth));
    KAFKA.awaitCommittedToTheEnd(topic, groupId, Duration.ofSeconds(90));
    assertThat(restoredCheckpoint(cluster)).as("restored after the kill").isNotNull();

    String savepoint = stopWithSavepoint();
    // Stopped for longer than the click ids, visitor marks and stored periods live.
    Thread.sleep(STATE_TTL.plusSeconds(5).toMillis());
    job = start(savepoint, 1);
    produce(clicks.subList(2 * fifth, 3 * fifth));
    KAFKA.awaitCommittedToTheEnd(topic, groupId, Duration.ofSeconds(60));
    assertThat(restoredCheckpoint(cluster)).as("resumed from the savepoint").isNotNull();

    job = start(stopWithSavepoint(), 2);
    produce(clicks.subList(3 * fifth, 4 * fifth));
    KAFKA.awaitCommittedToTheEnd(topic, groupId, Duration.ofSeconds(60));
    assertThat(restoredCheckpoint(cluster)).as("rescaled from the savepoint").isNotNull();

    // The upgrade: its savepoint left unused, started without state and a classifier rule more, on
    // one subtask so that a reconciliation can race its recount on the other slot.
    stopWithSavepoint();
    job = start(null, 1, "--crawler-agents", CRAWLER_AGENT);
    ExecutorService racing = Executors.newSingleThreadExecutor();
    Future<ReconcileReport> raced = racing.submit(() -> reconcile(false, 1));
    produce(clicks.subList(4 * fifth, clicks.size()));
    produce(truth.lateWithinLateness);
    GroundTruth.flushPartitions(producer, topic, PARTITIONS);
    assertThat(raced.get(3, TimeUnit.MINUTES).refused())
        .as("the raced reconcile refused")
        .isFalse();
    racing.shutdown();
    ClickOracle oracle = truth.judgedWith(List.of(CRAWLER_AGENT));
    assertThat(oracle.bots())
        .as("clicks the upgrade judges otherwise")
        .isGreaterThan(truth.oracle.bots());

    await()
        .atMost(Duration.ofSeconds(120))
        .pollInterval(Duration.ofSeconds(1))
        .untilAsserted(() -> OracleTables.assertHold(POSTGRES, oracle, MAX_VALUES));
    OracleTables.Compared tables = OracleTables.assertHold(POSTGRES, oracle, MAX_VALUES);
    assertThat(tables.rows()).as("rows compared").isGreaterThan(500);
    assertThat(tables.floodedHourlyGroups()).as("flooded hourly groups").isPositive();
    assertThat(tables.floodedDailyGroups()).as("flooded daily groups").isPositive();
    job.cancel().get();

    ReconcileReport report = reconcile(true, 2);
    assertThat(report.minutesChecked()).isEqualTo(oracle.minutes().size());
    assertThat(report.minutesDiffering()).as("minutes to repair").isZero();
    for (AggregateTable table : AggregateTable.values()) {
      assertThat(report.aggregateRowsChanged(table)).as(table + " rows to repair").isZero();
    }
  }

  /**
   * Starts the job on {@code parallelism} subtasks, from {@code savepoint} when given, with {@code
   * more} flags.
   */
  private JobClient start(String savepoint, int parallelism, String... more) throws Exception {
    List<String> flags =
        new ArrayList<>(
            List.of(
                "--allowed-lateness",
                "2m",
                "--checkpoint-interval",
                "1s",
                "--checkpoint-dir",
                checkpoints.toUri().toString(),
                "--dedup-ttl",
                STATE_TTL.toSeconds() + "s",
                "--state-ttl",
                STATE_TTL.toSeconds() + "s",
                "--max-dimension-values",
                String.valueOf(MAX_VALUES),
                "--parallelism",
                String.valueOf(parallelism)));
    flags.addAll(List.of(more));
    ClickJobOptions options =
        ClickJobArgs.connectedTo(
            KAFKA,
            POSTGRES,
            topic,
            KAFKA.newTopic("clicks-dlq", 1),
            groupId,
            flags.toArray(String[]::new));
    StreamExecutionEnvironment env =
        StreamExecutionEnvironment.getExecutionEnvironment(ClickCountJob.configuration(options));
    ClickCountJob.build(env, options);
    StreamGraph graph = env.getStreamGraph();
    graph.setJobName(ClickCountJob.JOB_NAME);
    if (savepoint != null) {
      graph.setSavepointRestoreSettings(SavepointRestoreSettings.forPath(savepoint, false));
    }
    return env.executeAsync(graph);
  }

  /** Stops the running job with a savepoint, as an upgrade or a planned stop does. */
  private String stopWithSavepoint() throws Exception {
    String path =
        job.stopWithSavepoint(false, savepoints.toUri().toString(), SavepointFormatType.CANONICAL)
            .get();
    await()
        .atMost(Duration.ofSeconds(60))
        .until(() -> job.getJobStatus().get().isGloballyTerminalState());
    return path;
  }

  private Object restoredCheckpoint(MiniCluster cluster) throws Exception {
    return cluster
        .getExecutionGraph(job.getJobID())
        .get()
        .getCheckpointStatsSnapshot()
        .getLatestRestoredCheckpoint();
  }

  private void produce(List<GroundTruth.Record> records) {
    GroundTruth.produce(producer, topic, records);
  }

  /** Reconciles the last two hours, changing nothing when {@code dryRun}. */
  private ReconcileReport reconcile(boolean dryRun, int parallelism) throws Exception {
    Instant now = Instant.now();
    List<String> args =
        ReconcileArgs.connectedTo(
            KAFKA,
            POSTGRES,
            topic,
            "--from",
            now.minus(Duration.ofHours(2)).toString(),
            "--to",
            now.toString(),
            "--crawler-agents",
            CRAWLER_AGENT,
            "--max-dimension-values",
            String.valueOf(MAX_VALUES),
            "--parallelism",
            String.valueOf(parallelism));
    if (dryRun) {
      args.add("--dry-run");
    }
    ReconcileOptions options = ReconcileOptions.parse(args.toArray(String[]::new));
    return ReconcileJob.run(StreamExecutionEnvironment.getExecutionEnvironment(), options, now);
  }
}
