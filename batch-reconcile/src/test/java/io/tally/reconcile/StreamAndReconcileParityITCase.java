package io.tally.reconcile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tally.clickjob.ClickCountJob;
import io.tally.clickjob.ClickJobOptions;
import io.tally.clickjob.GroundTruth;
import io.tally.event.ClickRecords;
import io.tally.testing.ClickOracle;
import io.tally.testing.KafkaExtension;
import io.tally.testing.PostgresExtension;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.UUID;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The streaming job and reconciliation count one stream alike, table by table. The stream: the job
 * tests' generated clicks of yesterday (out of order, 5% delivered twice, each copy on a partition
 * of its own choosing, version-1 events, every kind of bot, clicks late within the lateness,
 * malformed records) and a flood of referrer hosts on one link, more than an hour keeps. The live
 * job counts it to the end; then a dry-run reconciliation of the whole day recounts it from the log
 * and finds no row to change in any table: the flooded breakdown's kept values may differ, and
 * reconcile judges that group by its total (ADR-006).
 */
class StreamAndReconcileParityITCase {

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
  private static final String MAX_VALUES = "20";

  @TempDir Path checkpoints;

  @Test
  void theStreamingJobAndReconcileWriteTheSameRowsInEveryTable() throws Exception {
    POSTGRES.truncateAll();
    Instant today = Instant.now().truncatedTo(ChronoUnit.DAYS);
    GroundTruth truth = new GroundTruth(today.minus(Duration.ofHours(12)).toEpochMilli(), 31);
    truth.floodReferrers("alpha", 60, 5);
    String topic = KAFKA.newTopic("clicks", PARTITIONS);
    produce(topic, truth);

    JobClient job = startStreamingJob(topic);
    try {
      awaitAllCounted(truth.oracle);
    } finally {
      job.cancel().get();
    }
    Map<String, List<Long>> streamed = referrers("alpha");

    ReconcileReport report = reconcile(topic, today.minus(Duration.ofDays(1)), today);

    assertThat(report.distinctClicks()).isEqualTo(truth.oracle.distinct());
    assertThat(report.minutesChecked()).isEqualTo(truth.oracle.minutes().size());
    assertThat(report.minutesDiffering()).isZero();
    for (AggregateTable table : AggregateTable.values()) {
      assertThat(report.aggregateRowsChanged(table)).as(table.table()).isZero();
      assertThat(report.aggregateRowsNotCovered(table)).as(table.table()).isZero();
    }
    assertThat(streamed)
        .as("the flooded hour keeps %s referrers and counts the rest under (other)", MAX_VALUES)
        .hasSize(Integer.parseInt(MAX_VALUES) + 1)
        .containsKey("(other)");
    assertThat(referrers("alpha")).isEqualTo(streamed);
  }

  /** Every record, each on a random partition: a copy of a click lands apart from its original. */
  private static void produce(String topic, GroundTruth truth) {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, KAFKA.bootstrapServers());
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
    p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
    Random random = new Random(3);
    try (KafkaProducer<String, byte[]> producer = new KafkaProducer<>(p)) {
      for (List<GroundTruth.Record> part : List.of(truth.onTime, truth.lateWithinLateness)) {
        for (GroundTruth.Record r : part) {
          producer.send(
              new ProducerRecord<>(topic, random.nextInt(PARTITIONS), r.ts(), null, r.value()));
        }
      }
      // A click stamped now in every partition carries the watermarks past all of yesterday.
      for (int partition = 0; partition < PARTITIONS; partition++) {
        ProducerRecord<String, byte[]> r =
            ClickRecords.of(
                topic, GroundTruth.flush("flush-" + partition, System.currentTimeMillis()));
        producer.send(new ProducerRecord<>(topic, partition, r.timestamp(), null, r.value()));
      }
    }
  }

  private JobClient startStreamingJob(String topic) throws Exception {
    ClickJobOptions options =
        ClickJobOptions.parse(
            "--bootstrap-servers",
            KAFKA.bootstrapServers(),
            "--topic",
            topic,
            "--dlq-topic",
            KAFKA.newTopic("clicks-dlq", 1),
            "--group-id",
            "parity-" + UUID.randomUUID(),
            "--jdbc-url",
            POSTGRES.jdbcUrl(),
            "--jdbc-user",
            POSTGRES.user(),
            "--jdbc-password",
            POSTGRES.password(),
            "--allowed-lateness",
            "2m",
            "--idle-timeout",
            "1h",
            "--checkpoint-interval",
            "2s",
            "--checkpoint-dir",
            checkpoints.toUri().toString(),
            "--max-dimension-values",
            MAX_VALUES,
            "--parallelism",
            "2");
    StreamExecutionEnvironment env =
        StreamExecutionEnvironment.getExecutionEnvironment(ClickCountJob.configuration(options));
    ClickCountJob.build(env, options);
    return env.executeAsync(ClickCountJob.JOB_NAME);
  }

  /**
   * Until the minute, hour and day tables hold what the oracle says: every period of yesterday is
   * closed.
   */
  private static void awaitAllCounted(ClickOracle oracle) {
    await()
        .atMost(Duration.ofSeconds(120))
        .pollInterval(Duration.ofSeconds(1))
        .untilAsserted(
            () -> {
              assertThat(
                      POSTGRES.rows(
                          "SELECT code || '@' || (extract(epoch FROM minute) * 1000)::bigint,"
                              + " clicks, bot_clicks FROM click_counts WHERE code NOT LIKE"
                              + " 'flush-%'"))
                  .isEqualTo(lists(oracle.minutes()));
              assertThat(
                      POSTGRES.rows(
                          "SELECT code || '@' || (extract(epoch FROM hour) * 1000)::bigint, clicks,"
                              + " bot_clicks, visitors FROM click_hourly WHERE code NOT LIKE"
                              + " 'flush-%'"))
                  .isEqualTo(lists(oracle.hours()));
              assertThat(
                      POSTGRES.rows(
                          "SELECT code || '@' || (extract(epoch FROM day::timestamp AT TIME ZONE"
                              + " 'UTC') * 1000)::bigint, clicks, bot_clicks, visitors FROM"
                              + " click_daily WHERE code NOT LIKE 'flush-%'"))
                  .isEqualTo(lists(oracle.days()));
              assertThat(POSTGRES.texts(ClickOracle.STORED_DAY_SKETCHES))
                  .isEqualTo(oracle.daySketches());
            });
  }

  private static ReconcileReport reconcile(String topic, Instant from, Instant to)
      throws Exception {
    ReconcileOptions options =
        ReconcileOptions.parse(
            "--bootstrap-servers",
            KAFKA.bootstrapServers(),
            "--topic",
            topic,
            "--jdbc-url",
            POSTGRES.jdbcUrl(),
            "--jdbc-user",
            POSTGRES.user(),
            "--jdbc-password",
            POSTGRES.password(),
            "--from",
            from.toString(),
            "--to",
            to.toString(),
            "--max-dimension-values",
            MAX_VALUES,
            "--dry-run",
            "--parallelism",
            "2");
    return ReconcileJob.run(
        StreamExecutionEnvironment.getExecutionEnvironment(), options, Instant.now());
  }

  /** A link's referrer breakdown rows: value → clicks. */
  private static Map<String, List<Long>> referrers(String code) {
    return POSTGRES.rows(
        "SELECT value, clicks FROM click_dimensions_hourly WHERE code = '"
            + code
            + "' AND dimension = 'referrer'");
  }

  private static Map<String, List<Long>> lists(Map<String, long[]> rows) {
    Map<String, List<Long>> lists = new HashMap<>();
    rows.forEach((key, values) -> lists.put(key, Arrays.stream(values).boxed().toList()));
    return lists;
  }
}
