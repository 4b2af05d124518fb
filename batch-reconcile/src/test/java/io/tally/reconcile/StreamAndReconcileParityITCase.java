package io.tally.reconcile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tally.clickjob.ClickCountJob;
import io.tally.clickjob.ClickJobOptions;
import io.tally.clickjob.GroundTruth;
import io.tally.event.ClickEvent;
import io.tally.event.ClickEventCodec;
import io.tally.event.Decoded;
import io.tally.testing.ClickEvents;
import io.tally.testing.ClickOracle;
import io.tally.testing.KafkaExtension;
import io.tally.testing.PostgresExtension;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import java.util.regex.Pattern;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The streaming job and reconciliation count one stream alike, and each as an oracle that asks no
 * production code says, table by table. The stream: the job tests' generated clicks across a UTC
 * midnight (so across an hour and a day), out of order, 5% delivered twice, version-1 events, every
 * kind of bot, clicks late within the lateness, malformed records, a flood of referrer hosts on one
 * link (more than a breakdown keeps), clicks on the last and first millisecond of a minute, an hour
 * and a day, and copies of clicks whose records carry another timestamp than the click, sent before
 * or after the original. The live job counts it to the end; clicks later than the lateness are then
 * sent and dead-lettered. A reconciliation of both days recounts the log, repairs exactly the
 * minutes of the late clicks, and leaves every table as the oracle of all clicks says.
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
  private static final int MAX_VALUES = 20;
  private static final long MINUTE = GroundTruth.MINUTE;

  /** Copies of clicks sent with a record timestamp this far from the click's own. */
  private static final long COPY_SKEW = 30_000;

  @TempDir Path checkpoints;

  private String dlqTopic;

  /** The midnight two days ago, which the stream is placed around. */
  private long midnight;

  /** A record as sent: its partition, its record timestamp and its bytes. */
  private record Sent(int partition, long timestamp, byte[] value) {}

  @Test
  void theStreamingJobAndReconcileCountEveryTableAsTheOracleSays() throws Exception {
    POSTGRES.truncateAll();
    // A midnight two days ago, five minutes into the generated stream: every period is long closed.
    midnight = Instant.now().truncatedTo(ChronoUnit.DAYS).minus(Duration.ofDays(2)).toEpochMilli();
    GroundTruth truth = new GroundTruth(midnight + 35 * MINUTE, 31);
    assertThat(truth.base).isEqualTo(midnight - 5 * MINUTE);
    truth.floodReferrers("alpha", 300, 5);
    Instant from = Instant.ofEpochMilli(midnight).minus(Duration.ofDays(1));
    Instant to = Instant.ofEpochMilli(midnight).plus(Duration.ofDays(1));

    List<Sent> stream = new ArrayList<>();
    Random random = new Random(3);
    // On the first instant of the recounted range, first on its partition.
    stream.add(sent(truth, 0, ClickEvents.minimal(id(random), "beta", from.toEpochMilli(), false)));
    for (GroundTruth.Record r : truth.onTime) {
      stream.add(new Sent(random.nextInt(PARTITIONS), r.ts(), r.value()));
    }
    for (GroundTruth.Record r : truth.lateWithinLateness) {
      stream.add(new Sent(random.nextInt(PARTITIONS), r.ts(), r.value()));
    }
    // The last and first millisecond of a minute, and of an hour and a day.
    for (long ts :
        new long[] {truth.base + 3 * MINUTE - 1, truth.base + 3 * MINUTE, midnight - 1, midnight}) {
      insertInTimeOrder(stream, sent(truth, random.nextInt(PARTITIONS), human(random, ts)));
    }
    int copies = addCopiesWithOtherTimestamps(stream);

    String topic = KAFKA.newTopic("clicks", PARTITIONS);
    dlqTopic = KAFKA.newTopic("clicks-dlq", 1);
    send(topic, stream);
    for (int partition = 0; partition < PARTITIONS; partition++) {
      long now = System.currentTimeMillis();
      send(
          topic,
          List.of(
              new Sent(
                  partition,
                  now,
                  ClickEventCodec.encode(GroundTruth.flush("flush-" + partition, now)))));
    }

    JobClient job = startStreamingJob(topic);
    try {
      await()
          .atMost(Duration.ofSeconds(120))
          .pollInterval(Duration.ofSeconds(1))
          .untilAsserted(() -> assertTablesHold(truth.oracle));
      // Later than the lateness: dead-lettered, not counted by the stream.
      List<Sent> late = new ArrayList<>();
      for (GroundTruth.Record r : truth.tooLate) {
        late.add(new Sent(random.nextInt(PARTITIONS), r.ts(), r.value()));
      }
      send(topic, late);
      await().atMost(Duration.ofSeconds(60)).until(() -> lateLetters() == truth.tooLate.size());
    } finally {
      job.cancel().get();
    }
    Compared streamed = assertTablesHold(truth.oracle);
    assertThat(copies).as("copies sent with another record timestamp").isGreaterThanOrEqualTo(10);

    ClickOracle all = truth.withTooLate();
    ReconcileReport report = reconcile(topic, from, to);

    assertThat(report.distinctClicks()).isEqualTo(all.distinct());
    assertThat(report.minutesChecked()).isEqualTo(all.minutes().size());
    assertThat(report.minutesDiffering())
        .as("the minutes of the late clicks, and no other")
        .isEqualTo(differing(truth.oracle.minutes(), all.minutes()))
        .isPositive();
    assertThat(report.aggregateRowsChanged(AggregateTable.HOURLY))
        .as("click_hourly rows the late clicks changed, and no other")
        .isEqualTo(differing(truth.oracle.hours(), all.hours()));
    assertThat(report.aggregateRowsChanged(AggregateTable.DAILY))
        .as("click_daily rows the late clicks changed, and no other")
        .isEqualTo(differing(truth.oracle.days(), all.days()));
    assertThat(report.aggregateRowsChanged(AggregateTable.DIMENSIONS)).isPositive();
    assertThat(report.aggregateRowsChanged(AggregateTable.DAY_DIMENSIONS)).isPositive();
    Compared recounted = assertTablesHold(all);
    assertThat(recounted.rows()).as("rows compared").isGreaterThanOrEqualTo(streamed.rows());
  }

  /** A click the test adds to the stream and to the stream's oracle. */
  private static Sent sent(GroundTruth truth, int partition, ClickEvent click) {
    truth.count(click);
    return new Sent(partition, click.ts(), ClickEventCodec.encode(click));
  }

  /** A person's click on a link of its own, with a visitor, a referrer and a country. */
  private static ClickEvent human(Random random, long ts) {
    return ClickEvent.builder(id(random), "edges", ts)
        .visitor(ClickEvents.visitor("edge-" + random.nextInt(3)))
        .userAgent(ClickEvents.DESKTOP_BROWSER)
        .referrerDomain("edge.example")
        .country("FR")
        .build();
  }

  private static UUID id(Random random) {
    return new UUID(random.nextLong(), random.nextLong());
  }

  /** Inserts a record before the first one stamped after it (the first record stays first). */
  private static void insertInTimeOrder(List<Sent> stream, Sent record) {
    int at = 1;
    while (at < stream.size() && stream.get(at).timestamp() <= record.timestamp()) {
      at++;
    }
    stream.add(at, record);
  }

  /**
   * Sends a copy of every 20th click on its original's partition with a record timestamp {@link
   * #COPY_SKEW} away from the click's time, across a minute's end: stamped later and sent before
   * the original when the click is in the second half of its minute, stamped earlier and sent after
   * it otherwise. A job that counted a click by its record, or kept another copy than the other
   * job, would count it in another minute.
   */
  private static int addCopiesWithOtherTimestamps(List<Sent> stream) {
    int copies = 0;
    int valid = 0;
    for (int i = 0; i < stream.size(); i++) {
      Sent original = stream.get(i);
      if (!(ClickEventCodec.decode(original.value(), original.timestamp())
              instanceof Decoded.Valid click)
          || valid++ % 20 != 0) {
        continue;
      }
      long ts = click.event().ts();
      if (Math.floorMod(ts, MINUTE) >= COPY_SKEW) {
        stream.add(i, new Sent(original.partition(), ts + COPY_SKEW, original.value()));
      } else {
        stream.add(i + 1, new Sent(original.partition(), ts - COPY_SKEW, original.value()));
      }
      i++;
      copies++;
    }
    return copies;
  }

  private static void send(String topic, List<Sent> records) {
    try (KafkaProducer<String, byte[]> producer = KAFKA.producer()) {
      for (Sent r : records) {
        producer.send(new ProducerRecord<>(topic, r.partition(), r.timestamp(), null, r.value()));
      }
    }
  }

  /** The dead letters of late clicks written so far. */
  private long lateLetters() {
    Pattern late = Pattern.compile("\"reason\"\\s*:\\s*\"late\"");
    return KAFKA.values(dlqTopic).stream()
        .filter(letter -> late.matcher(new String(letter, StandardCharsets.UTF_8)).find())
        .count();
  }

  private JobClient startStreamingJob(String topic) throws Exception {
    ClickJobOptions options =
        ClickJobOptions.parse(
            "--bootstrap-servers",
            KAFKA.bootstrapServers(),
            "--topic",
            topic,
            "--dlq-topic",
            dlqTopic,
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
            // The click on the range's first instant is a day older than the rest: read after them
            // from a sibling partition, it must still be on time. Lateness stays 2 minutes.
            "--out-of-orderness",
            "30h",
            "--idle-timeout",
            "1h",
            "--checkpoint-interval",
            "2s",
            "--checkpoint-dir",
            checkpoints.toUri().toString(),
            "--max-dimension-values",
            String.valueOf(MAX_VALUES),
            "--parallelism",
            "2");
    StreamExecutionEnvironment env =
        StreamExecutionEnvironment.getExecutionEnvironment(ClickCountJob.configuration(options));
    ClickCountJob.build(env, options);
    return env.executeAsync(ClickCountJob.JOB_NAME);
  }

  private static ReconcileReport reconcile(String topic, Instant from, Instant to)
      throws Exception {
    ReconcileOptions options =
        ReconcileOptions.parse(
            ReconcileArgs.connectedTo(
                    KAFKA,
                    POSTGRES,
                    topic,
                    "--from",
                    from.toString(),
                    "--to",
                    to.toString(),
                    "--max-dimension-values",
                    String.valueOf(MAX_VALUES),
                    "--parallelism",
                    "2")
                .toArray(String[]::new));
    return ReconcileJob.run(
        StreamExecutionEnvironment.getExecutionEnvironment(), options, Instant.now());
  }

  /** How many rows a comparison saw, and how many flooded breakdown groups among them. */
  private record Compared(int rows, int floodedGroups) {}

  /** Every table as {@code oracle} says ({@link OracleTables}), over both days and the flood. */
  private Compared assertTablesHold(ClickOracle oracle) {
    OracleTables.Compared tables = OracleTables.assertHold(POSTGRES, oracle, MAX_VALUES);

    // What the comparisons saw: no table compared empty, the stream across an hour and a day.
    assertThat(tables.minutes()).hasSizeGreaterThan(50);
    assertThat(tables.hours()).containsKeys(key("alpha", midnight - HOUR), key("alpha", midnight));
    assertThat(tables.days()).containsKeys(key("alpha", midnight - DAY), key("alpha", midnight));
    assertThat(tables.sketches()).isNotEmpty();
    assertThat(tables.hourlyRows()).as("hourly breakdown rows").isGreaterThan(100);
    assertThat(tables.dailyRows()).as("daily breakdown rows").isGreaterThan(100);
    assertThat(tables.floodedHourlyGroups()).as("flooded hourly groups").isPositive();
    assertThat(tables.floodedDailyGroups()).as("flooded daily groups").isPositive();
    return new Compared(tables.rows(), tables.floodedHourlyGroups() + tables.floodedDailyGroups());
  }

  private static final long HOUR = 3_600_000;
  private static final long DAY = 24 * HOUR;

  private static String key(String code, long start) {
    return ClickOracle.key(code, start);
  }

  /** Minutes whose row differs between two oracles. */
  private static long differing(Map<String, long[]> a, Map<String, long[]> b) {
    Set<String> keys = new HashSet<>(a.keySet());
    keys.addAll(b.keySet());
    return keys.stream().filter(k -> !Arrays.equals(a.get(k), b.get(k))).count();
  }
}
