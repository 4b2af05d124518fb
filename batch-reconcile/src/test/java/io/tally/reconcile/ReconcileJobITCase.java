package io.tally.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.counting.records.DimensionCount;
import io.tally.event.ClickEvent;
import io.tally.event.VisitorSketches;
import io.tally.testing.ClickEvents;
import io.tally.testing.ClickOracle;
import io.tally.testing.KafkaExtension;
import io.tally.testing.PostgresExtension;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.function.IntFunction;
import org.apache.datasketches.cpc.CpcSketch;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * batch-reconcile on a MiniCluster with a real Kafka broker and PostgreSQL: a known stream, a
 * counts table corrupted on purpose in every way, and a run that must restore the ground truth,
 * report each kind of drift exactly, and find nothing the second time; a log one of whose
 * partitions lost its start to retention (every link has clicks in each partition), an empty or
 * misnamed topic, and a repair that would remove too much, none of which may lower a correct count.
 */
class ReconcileJobITCase {

  @RegisterExtension static final KafkaExtension KAFKA = new KafkaExtension();
  @RegisterExtension static final PostgresExtension POSTGRES = new PostgresExtension();

  @RegisterExtension
  static final MiniClusterExtension FLINK =
      new MiniClusterExtension(
          new MiniClusterResourceConfiguration.Builder()
              .setNumberTaskManagers(1)
              .setNumberSlotsPerTaskManager(2)
              .build());

  private static final long MINUTE = 60_000;
  private static final String[] CODES = {"alpha", "bravo", "charlie", "delta", "echo"};
  private static final int PARTITIONS = 3;

  private final Instant now = Instant.now();
  private final long base =
      now.truncatedTo(ChronoUnit.MINUTES).minus(60, ChronoUnit.MINUTES).toEpochMilli();
  private final Map<String, long[]> counted = new HashMap<>();
  private final Map<String, List<Long>> truth = new HashMap<>();
  private String topic;
  private KafkaProducer<String, byte[]> producer;
  private int produced;
  private final List<Future<RecordMetadata>> sends = new ArrayList<>();
  private int duplicates;

  @BeforeEach
  void setUp() {
    topic = KAFKA.newTopic("clicks", PARTITIONS);
    POSTGRES.truncateAll();
    producer = KAFKA.producer();
  }

  @AfterEach
  void tearDown() {
    producer.close();
  }

  @Test
  void repairsEveryKindOfDriftReportsItExactlyAndASecondRunFindsNothing() throws Exception {
    produceKnownStream();
    writeTruthToTable();
    corrupt("alpha", 1, 5, 0); // over
    corrupt("bravo", 2, -1, 0); // under (every code has at least one human click a minute)
    corrupt("charlie", 3, 1, -1); // mixed when charlie had bot clicks then, otherwise over
    deleteRow("delta", 4); // missing
    deleteRow("echo", 9); // missing

    ReconcileReport report = reconcile("--from", iso(base), "--to", iso(base + 10 * MINUTE));

    assertThat(table()).isEqualTo(truth);
    assertThat(report.eventsRead()).isEqualTo(produced + 3);
    assertThat(report.malformed())
        .containsOnlyKeys("not_json", "click_id", "schema_version")
        .containsValues(1L);
    assertThat(report.duplicates()).isEqualTo(duplicates);
    assertThat(report.distinctClicks())
        .isEqualTo(truth.values().stream().mapToLong(t -> t.get(0) + t.get(1)).sum());
    assertThat(report.differing(DriftKind.OVER) + report.differing(DriftKind.MIXED)).isEqualTo(2);
    assertThat(report.differing(DriftKind.UNDER)).isEqualTo(1);
    assertThat(report.differing(DriftKind.MISSING)).isEqualTo(2);
    assertThat(report.differing(DriftKind.UNSUPPORTED)).isEqualTo(0);
    assertThat(report.minutesDiffering()).isEqualTo(5);
    assertThat(report.clicksAdded())
        .isEqualTo(1 + rowTotal("delta", 4) + rowTotal("echo", 9) + (charlieHadBots() ? 1 : 0));
    assertThat(report.clicksRemoved()).isEqualTo(5 + 1);
    assertThat(report.minutesLeftOpen()).isZero();
    assertThat(driftRows(report.runId())).isEqualTo(5);

    ReconcileReport second = reconcile("--from", iso(base), "--to", iso(base + 10 * MINUTE));

    assertThat(second.minutesDiffering()).isZero();
    assertThat(second.clicksAdded()).isZero();
    assertThat(second.clicksRemoved()).isZero();
    assertThat(table()).isEqualTo(truth);
  }

  @Test
  void removesARowTheRawLogDoesNotSupport() throws Exception {
    produceKnownStream();
    writeTruthToTable();
    long emptyMinute = base + 7 * MINUTE;
    insertRow("ghost", 7, 4, 2);

    ReconcileReport report = reconcile("--from", iso(base), "--to", iso(base + 10 * MINUTE));

    assertThat(report.differing(DriftKind.UNSUPPORTED)).isEqualTo(1);
    assertThat(report.clicksRemoved()).isEqualTo(6);
    assertThat(table()).isEqualTo(truth).doesNotContainKey("ghost@" + emptyMinute);
  }

  @Test
  void dryRunReportsTheDriftButChangesNothing() throws Exception {
    produceKnownStream();
    writeTruthToTable();
    corrupt("alpha", 1, 5, 0);
    deleteRow("bravo", 2);
    Map<String, List<Long>> before = table();

    ReconcileReport report =
        reconcile("--from", iso(base), "--to", iso(base + 10 * MINUTE), "--dry-run");

    assertThat(report.dryRun()).isTrue();
    assertThat(report.minutesDiffering()).isEqualTo(2);
    assertThat(table()).isEqualTo(before);
  }

  @Test
  void leavesAMinuteInsideTheHorizonAlone() throws Exception {
    // The minute that ended last: closed for the window, but not yet past the streaming job's
    // lateness.
    long current = now.truncatedTo(ChronoUnit.MINUTES).toEpochMilli() - MINUTE;
    for (int i = 0; i < 3; i++) {
      send(ClickEvents.minimal(UUID.randomUUID(), "live", current + i, false));
    }
    flushAcknowledged();
    insertRowAt("live", current, 1, 0);

    ReconcileReport report = reconcile("--from", iso(current - 5 * MINUTE), "--to", "now");

    assertThat(report.minutesLeftOpen()).isEqualTo(1);
    assertThat(report.minutesDiffering()).isZero();
    assertThat(table().get("live@" + current)).containsExactly(1L, 0L);
  }

  /**
   * The start of a UTC day that is closed whatever the time: two days back, since for the
   * reconcile's horizon after midnight yesterday's last hour is still open.
   */
  private static long wholeClosedDay() {
    return Instant.now().truncatedTo(ChronoUnit.DAYS).minus(2, ChronoUnit.DAYS).toEpochMilli();
  }

  @Test
  void recountsHoursDaysVisitorsAndBreakdownsAndRepairsTheirDrift() throws Exception {
    long day = wholeClosedDay();
    Map<String, List<Long>> hours = new HashMap<>();
    Map<String, List<Long>> breakdowns = new HashMap<>();
    long[] dayTotals = new long[2];
    Map<String, java.util.Set<String>> hourVisitors = new HashMap<>();
    java.util.Set<String> dayVisitors = new java.util.HashSet<>();
    CpcSketch daySketch = VisitorSketches.newSketch();
    Random random = new Random(5);
    for (int i = 0; i < 400; i++) {
      long ts = day + random.nextInt(24 * 60) * MINUTE + random.nextInt((int) MINUTE);
      long hour = ts - ts % (60 * MINUTE);
      boolean bot = random.nextInt(10) == 0;
      String visitor = ClickEvents.visitor("visitor-" + random.nextInt(25));
      long rangeVisitor = ClickEvents.rangeVisitor(visitor.hashCode(), 0);
      String country = random.nextBoolean() ? "DE" : "US";
      send(
          ClickEvent.builder(UUID.randomUUID(), "alpha", ts)
              .visitor(visitor)
              .rangeVisitor(rangeVisitor)
              .userAgent(ClickEvents.DESKTOP_BROWSER)
              .country(country)
              .head(bot)
              .build());
      String hourKey = key("alpha", hour);
      List<Long> totals = new ArrayList<>(hours.getOrDefault(hourKey, List.of(0L, 0L, 0L)));
      totals.set(bot ? 1 : 0, totals.get(bot ? 1 : 0) + 1);
      dayTotals[bot ? 1 : 0]++;
      if (!bot) {
        hourVisitors.computeIfAbsent(hourKey, k -> new java.util.HashSet<>()).add(visitor);
        totals.set(2, (long) hourVisitors.get(hourKey).size());
        dayVisitors.add(visitor);
        daySketch.update(rangeVisitor);
      }
      hours.put(hourKey, totals);
      breakdowns.merge(
          hourKey + "@" + (bot ? "bot_kind@head" : "country@" + country),
          List.of(1L),
          (a, b) -> List.of(a.get(0) + b.get(0)));
    }
    flushAcknowledged();
    String from = iso(day);
    String to = iso(day + 24 * 60 * MINUTE);

    ReconcileReport first = reconcile("--from", from, "--to", to);

    assertThat(first.aggregateRowsChanged(AggregateTable.HOURLY)).isEqualTo(hours.size());
    assertThat(hourly()).isEqualTo(hours);
    assertThat(daily())
        .isEqualTo(
            Map.of(
                key("alpha", day), List.of(dayTotals[0], dayTotals[1], (long) dayVisitors.size())));
    assertThat(breakdowns("country", "bot_kind")).isEqualTo(breakdowns);
    String sketch = HexFormat.of().formatHex(VisitorSketches.toBytes(daySketch));
    assertThat(daySketches()).isEqualTo(Map.of(key("alpha", day), sketch));

    String anHour = hours.keySet().iterator().next();
    long hourStart = Long.parseLong(anHour.split("@")[1]);
    execute(
        "UPDATE click_hourly SET visitors = visitors + 3 WHERE hour = to_timestamp("
            + hourStart / 1000
            + ")");
    execute("UPDATE click_daily SET clicks = clicks - 7");
    execute(
        "DELETE FROM click_dimensions_hourly WHERE dimension = 'country' AND value = 'DE' AND hour"
            + " = to_timestamp("
            + hourStart / 1000
            + ")");
    execute(
        "INSERT INTO click_hourly (code, hour, clicks, bot_clicks, visitors) VALUES ('ghost',"
            + " to_timestamp("
            + hourStart / 1000
            + "), 9, 0, 9)");

    ReconcileReport second = reconcile("--from", from, "--to", to);

    assertThat(second.aggregateRowsChanged(AggregateTable.HOURLY)).isEqualTo(2);
    assertThat(second.aggregateRowsChanged(AggregateTable.DAILY)).isEqualTo(1);
    assertThat(second.aggregateRowsChanged(AggregateTable.DIMENSIONS)).isGreaterThanOrEqualTo(1);
    assertThat(hourly()).isEqualTo(hours);
    assertThat(daily().get(key("alpha", day)).get(0)).isEqualTo(dayTotals[0]);
    assertThat(breakdowns("country", "bot_kind")).isEqualTo(breakdowns);
    assertThat(second.summary()).contains("click_hourly").contains("2 rows repaired");

    CpcSketch fewer = VisitorSketches.newSketch();
    fewer.update(42L);
    execute(
        "UPDATE click_daily SET visitor_sketch = decode('"
            + HexFormat.of().formatHex(VisitorSketches.toBytes(fewer))
            + "', 'hex')");
    ReconcileReport sketchRepaired = reconcile("--from", from, "--to", to);
    assertThat(sketchRepaired.aggregateRowsChanged(AggregateTable.DAILY)).isEqualTo(1);
    assertThat(daySketches()).isEqualTo(Map.of(key("alpha", day), sketch));

    ReconcileReport third = reconcile("--from", from, "--to", to);
    for (AggregateTable table : AggregateTable.values()) {
      assertThat(third.aggregateRowsChanged(table)).as(table.table()).isZero();
    }
  }

  @Test
  void judgesAFloodedDimensionByItsTotalWhateverValuesTheStreamKept() throws Exception {
    long hour =
        Instant.now().truncatedTo(ChronoUnit.DAYS).minus(1, ChronoUnit.DAYS).toEpochMilli()
            + 60 * MINUTE;
    sendPeoplesClicks(hour, 10, i -> "r" + i + ".example", i -> "DE");
    String from = iso(hour);
    String to = iso(hour + 60 * MINUTE);
    reconcile("--from", from, "--to", to, "--max-dimension-values", "3");
    Map<String, List<Long>> recounted = breakdowns("referrer");
    assertThat(recounted).hasSize(4);
    assertThat(recounted.get(key("alpha", hour) + "@referrer@(other)")).containsExactly(7L);
    // The stream met the referrers in another order and kept three others.
    execute("DELETE FROM click_dimensions_hourly WHERE dimension = 'referrer'");
    for (String kept : List.of("r9.example", "r5.example", "r7.example")) {
      execute(
          "INSERT INTO click_dimensions_hourly (code, hour, dimension, value, clicks) VALUES"
              + " ('alpha', to_timestamp("
              + hour / 1000
              + "), 'referrer', '"
              + kept
              + "', 1)");
    }
    execute(
        "INSERT INTO click_dimensions_hourly (code, hour, dimension, value, clicks) VALUES"
            + " ('alpha', to_timestamp("
            + hour / 1000
            + "), 'referrer', '(other)', 7)");
    Map<String, List<Long>> streamsChoice = breakdowns("referrer");

    ReconcileReport agreed = reconcile("--from", from, "--to", to, "--max-dimension-values", "3");

    assertThat(agreed.aggregateRowsChanged(AggregateTable.DIMENSIONS)).isZero();
    assertThat(breakdowns("referrer")).isEqualTo(streamsChoice);

    execute("UPDATE click_dimensions_hourly SET clicks = 5 WHERE value = '(other)'");
    // Replacing the stream's kept values removes their clicks from them, far more than the default
    // share.
    ReconcileReport drifted =
        reconcile("--from", from, "--to", to, "--max-dimension-values", "3", "--force");

    assertThat(drifted.aggregateRowsChanged(AggregateTable.DIMENSIONS)).isPositive();
    assertThat(breakdowns("referrer"))
        .as("the recount's own choice, adding up to the clicks again")
        .hasSize(4)
        .containsEntry(key("alpha", hour) + "@referrer@(other)", List.of(7L));
  }

  @Test
  void aValueTheDatabaseRefusesIsCountedUnderItsStandInAndListedInTheReport() throws Exception {
    long hour =
        Instant.now().truncatedTo(ChronoUnit.DAYS).minus(1, ChronoUnit.DAYS).toEpochMilli()
            + 60 * MINUTE;
    sendPeoplesClicks(hour, 10, i -> "", i -> i < 6 ? "DE" : "FR");
    // A later migration that refuses a value the stream already counts, on the table and, as
    // every check is, on its staging table.
    for (String table : List.of("click_dimensions_hourly", "reconcile_recount_dimensions")) {
      execute("ALTER TABLE " + table + " ADD CONSTRAINT no_fr CHECK (value <> 'FR')");
    }
    try {
      String from = iso(hour);
      String to = iso(hour + 60 * MINUTE);

      ReconcileReport report = reconcile("--from", from, "--to", to);

      String standIn = new DimensionCount("alpha", hour, "country", "FR", 4).standIn().value();
      assertThat(report.refusedRows())
          .singleElement()
          .asString()
          .startsWith("reconcile_recount_dimensions: 23514 ")
          .contains("\"value\":\"FR\"");
      assertThat(report.summary()).contains("refused rows      1");
      assertThat(breakdowns("country"))
          .as("the link's values add up to its 10 clicks")
          .isEqualTo(
              Map.of(
                  key("alpha", hour) + "@country@DE",
                  List.of(6L),
                  key("alpha", hour) + "@country@" + standIn,
                  List.of(4L)));

      ReconcileReport again = reconcile("--from", from, "--to", to);

      assertThat(again.aggregateRowsChanged(AggregateTable.DIMENSIONS)).isZero();
    } finally {
      for (String table : List.of("click_dimensions_hourly", "reconcile_recount_dimensions")) {
        execute("ALTER TABLE " + table + " DROP CONSTRAINT no_fr");
      }
    }
  }

  @Test
  void leavesHoursTheRangeCutsAlone() throws Exception {
    produceKnownStream();
    execute(
        "INSERT INTO click_hourly (code, hour, clicks, bot_clicks, visitors) VALUES ('alpha',"
            + " to_timestamp("
            + (base - base % (60 * MINUTE)) / 1000
            + "), 12345, 0, 1)");

    ReconcileReport report = reconcile("--from", iso(base), "--to", iso(base + 10 * MINUTE));

    // Ten minutes hold no whole hour: the recount saw only part of it and must not judge the stored
    // row.
    assertThat(report.aggregateRowsChanged(AggregateTable.HOURLY)).isZero();
    assertThat(hourly().values()).containsExactly(List.of(12345L, 0L, 1L));
  }

  @Test
  void leavesEveryLinksMinutesBeforeTheLatestStartOfAnyPartitionUntouchedAndReportsThem()
      throws Exception {
    // In time order (less than a minute out of order): the 1-minute read slack is the margin.
    produceKnownStream(false);
    writeTruthToTable();
    int cut = 1;
    long earliest = deleteRecordsBefore(cut, base + 5 * MINUTE);
    // Every link has clicks in the cut partition, so the recount lacks some of each link's early
    // clicks.
    for (String code : CODES) {
      corrupt(code, 1, 5, 0); // before the coverage: must stay as it is
    }
    corrupt("alpha", 8, -1, 0); // covered: repaired (under, so the removal limit has no say)
    Map<String, List<Long>> expected = new HashMap<>(truth);
    for (String code : CODES) {
      expected.put(key(code, base + MINUTE), table().get(key(code, base + MINUTE)));
    }

    ReconcileReport report =
        reconcile("--from", iso(base), "--to", iso(base + 10 * MINUTE), "--read-slack", "1m");

    // Covered from the cut partition's earliest retained record plus the read slack, rounded up to
    // a minute.
    long coveredFrom = (earliest + MINUTE + MINUTE - 1) / MINUTE * MINUTE;
    assertThat(report.refusal()).isEmpty();
    assertThat(table()).isEqualTo(expected);
    assertThat(report.minutesNotCovered())
        .isEqualTo(CODES.length * ((coveredFrom - base) / MINUTE));
    assertThat(report.minutesDiffering()).isEqualTo(1);
    assertThat(report.clicksAdded()).isEqualTo(1);
    assertThat(report.clicksRemoved()).isZero();
    assertThat(report.coverage().partitions().get(cut).coveredFrom())
        .isEqualTo(Instant.ofEpochMilli(coveredFrom));
    assertThat(report.coverage().partitions().get(cut).earliestTimestamp()).isEqualTo(earliest);
    assertThat(report.coverage().partitions())
        .filteredOn(p -> p.partition() != cut)
        .allMatch(PartitionCoverage::complete);
    assertThat(report.summary())
        .contains(
            "not covered by the log: " + report.minutesNotCovered() + " minutes, left untouched")
        .contains("partition " + cut)
        .contains("every link      covered from " + Instant.ofEpochMilli(coveredFrom));
    assertThat(
            runRow(
                report.runId(),
                "status || ' ' || minutes_not_covered || ' ' || (coverage->>'covered_from') || ' '"
                    + " || (SELECT p->>'covered_from' FROM"
                    + " jsonb_array_elements(coverage->'partitions') p WHERE (p->>'partition')::int"
                    + " = "
                    + cut
                    + ")"))
        .isEqualTo(
            "finished "
                + report.minutesNotCovered()
                + " "
                + Instant.ofEpochMilli(coveredFrom)
                + " "
                + Instant.ofEpochMilli(coveredFrom));
  }

  @Test
  void readsEveryClickOfTheRangeWhateverAProducersClockSays() throws Exception {
    produceStreamFromSkewedClocks();
    writeTruthToTable();

    ReconcileReport report =
        reconcile("--from", iso(base + 20 * MINUTE), "--to", iso(base + 30 * MINUTE));

    assertThat(report.minutesDiffering()).as(report.summary()).isZero();
    assertThat(report.minutesChecked()).isPositive();
    assertThat(table()).isEqualTo(truth);
  }

  @Test
  void trustsWhereRetentionCutTheLogOnlyAsFarAsItsTimestampsAreInOrder() throws Exception {
    List<long[]> sends = produceStreamFromSkewedClocks();
    writeTruthToTable();
    // Retention cut partition 1 so that its earliest record left is a slow host's: stamped 15
    // minutes before it was written, and 30 minutes before the fast host's records just deleted.
    int cut = 1;
    long[] first =
        sends.stream()
            .filter(s -> s[0] == cut && s[2] == -SKEW && s[3] >= base + 22 * MINUTE)
            .findFirst()
            .orElseThrow();
    deleteRecordsBeforeOffset(cut, first[1]);

    ReconcileReport report =
        reconcile("--from", iso(base + 20 * MINUTE), "--to", iso(base + 40 * MINUTE));

    assertThat(report.refusal()).as(report.summary()).isEmpty();
    assertThat(report.clicksRemoved()).as(report.summary()).isZero();
    assertThat(report.minutesNotCovered()).isPositive();
    assertThat(table()).isEqualTo(truth);
    assertThat(report.coverage().partitions().get(cut).coveredFrom())
        .as("the earliest record's time plus the disorder measured, not the 10-minute read slack")
        .isAfterOrEqualTo(Instant.ofEpochMilli(first[3] + SKEW - MINUTE));
  }

  @Test
  void aPartitionRetentionEmptiedLeavesNoLinkCovered() throws Exception {
    produceKnownStream();
    writeTruthToTable();
    int emptied = 2;
    deleteRecordsBefore(emptied, Long.MAX_VALUE);
    corrupt("alpha", 4, 5, 0);
    corrupt("bravo", 4, 5, 0);
    Map<String, List<Long>> expected = table();

    ReconcileReport report = reconcile("--from", iso(base), "--to", iso(base + 10 * MINUTE));

    assertThat(table()).isEqualTo(expected);
    assertThat(report.refused()).isFalse();
    assertThat(report.coverage().partitions().get(emptied).emptied()).isTrue();
    assertThat(report.minutesNotCovered()).isEqualTo(truth.size());
    assertThat(report.minutesDiffering()).isZero();
    assertThat(report.summary())
        .contains("retention deleted all")
        .contains("every link      nothing of the range covered");
  }

  @Test
  void leavesHoursAndDaysTheLogNoLongerCoversWhollyUntouched() throws Exception {
    long day = wholeClosedDay();
    Random random = new Random(7);
    List<ClickEvent> clicks = new ArrayList<>();
    for (int i = 0; i < 480; i++) {
      long ts =
          day + (i / 20) * 60 * MINUTE + random.nextInt(60) * MINUTE + random.nextInt((int) MINUTE);
      String country = random.nextBoolean() ? "DE" : "US";
      clicks.add(
          ClickEvent.builder(UUID.randomUUID(), "alpha", ts)
              .visitor(ClickEvents.visitor("visitor-" + random.nextInt(25)))
              .userAgent(ClickEvents.DESKTOP_BROWSER)
              .country(country)
              .build());
    }
    clicks.sort(java.util.Comparator.comparingLong(ClickEvent::ts));
    clicks.forEach(this::send);
    flushAcknowledged();
    String from = iso(day);
    String to = iso(day + 24 * 60 * MINUTE);
    reconcile("--from", from, "--to", to);
    long early = day + 2 * 60 * MINUTE;
    long late = day + 10 * 60 * MINUTE;
    execute(
        "UPDATE click_hourly SET visitors = visitors + 3 WHERE hour IN (to_timestamp("
            + early / 1000
            + "), to_timestamp("
            + late / 1000
            + "))");
    execute("UPDATE click_daily SET clicks = clicks + 7");
    Map<String, List<Long>> hours = hourly();
    Map<String, List<Long>> days = daily();
    Map<String, List<Long>> breakdowns = breakdowns("country");
    long earliest = deleteRecordsBefore(0, day + 6 * 60 * MINUTE);
    int breakdownsBeforeHour7 =
        rows("SELECT dimension || '@' || value || '@' || hour, clicks FROM click_dimensions_hourly"
                + " WHERE hour < to_timestamp("
                + (day + 7 * 60 * MINUTE) / 1000
                + ")")
            .size();

    ReconcileReport report = reconcile("--from", from, "--to", to, "--read-slack", "1m");

    // Coverage starts inside hour 6: hours 0..6 and the day are not wholly covered; hour 10 is
    // repaired.
    assertThat(earliest).isBetween(day + 6 * 60 * MINUTE, day + 7 * 60 * MINUTE - 2 * MINUTE);
    List<Long> repaired = new ArrayList<>(hours.get(key("alpha", late)));
    repaired.set(2, repaired.get(2) - 3);
    hours.put(key("alpha", late), repaired);
    assertThat(hourly()).isEqualTo(hours);
    assertThat(daily()).isEqualTo(days);
    assertThat(breakdowns("country")).isEqualTo(breakdowns);
    assertThat(report.aggregateRowsChanged(AggregateTable.HOURLY)).isEqualTo(1);
    assertThat(report.aggregateRowsNotCovered(AggregateTable.HOURLY)).isEqualTo(7);
    assertThat(report.aggregateRowsNotCovered(AggregateTable.DAILY)).isEqualTo(1);
    assertThat(report.aggregateRowsChanged(AggregateTable.DAILY)).isZero();
    assertThat(report.aggregateRowsNotCovered(AggregateTable.DIMENSIONS))
        .isEqualTo(breakdownsBeforeHour7)
        .isGreaterThan(7);
    assertThat(report.summary()).contains("7 not covered by the log, left untouched");
  }

  @Test
  void inApplicationModeARefusedRunEndsWithItsStatusRecordedInsteadOfEndingTheJvm()
      throws Exception {
    ReconcileOptions options = options("--from", iso(base), "--to", iso(base + 10 * MINUTE));
    ReconcileJob.Launch insideTheJobManager =
        new ReconcileJob.Launch(true, Optional.of("a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6"));

    int status =
        ReconcileJob.runFromCommandLine(
            StreamExecutionEnvironment.getExecutionEnvironment(),
            options,
            now,
            insideTheJobManager);

    assertThat(status).as("no exit: the JobManager would restart and run it again").isZero();
    assertThat(runRow(lastRunId(), "status || ' ' || run_key"))
        .isEqualTo("refused a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6");
    assertThat(
            ReconcileJob.runFromCommandLine(
                StreamExecutionEnvironment.getExecutionEnvironment(),
                options("--from", iso(base), "--to", iso(base + 10 * MINUTE)),
                now,
                ReconcileJob.Launch.COMMAND_LINE))
        .as("flink run on the command line: a refusal is the exit status")
        .isEqualTo(ReconcileReport.EXIT_REFUSED);
  }

  @Test
  void aRunKeyResolvesItsRangeOnceAndRunsOnce() throws Exception {
    produceKnownStream();
    writeTruthToTable();
    corrupt("alpha", 3, 4, 0);
    String[] relative = {"--from", "70m", "--to", "50m", "--run-key", "nightly-1"};

    ReconcileReport first = reconcile(relative);
    corrupt("bravo", 4, 4, 0);
    // The JobManager restarted half an hour later and runs the application again.
    ReconcileReport again = reconcileTopic(topic, now.plus(Duration.ofMinutes(30)), relative);

    assertThat(first.minutesDiffering()).isEqualTo(1);
    assertThat(again.refusal())
        .hasValueSatisfying(why -> assertThat(why).contains("already ran as run " + first.runId()));
    assertThat(again.range()).isEqualTo(first.range());
    assertThat(table().get(key("bravo", base + 4 * MINUTE)))
        .as("nothing recounted the second time")
        .isNotEqualTo(truth.get(key("bravo", base + 4 * MINUTE)));
  }

  @Test
  void aRunWhoseProcessDiedIsAbandonedByTheNextAndItsKeysRangeRunAgain() throws Exception {
    produceKnownStream();
    writeTruthToTable();
    corrupt("alpha", 2, 3, 0);
    Instant from = Instant.ofEpochMilli(base);
    Instant to = Instant.ofEpochMilli(base + 10 * MINUTE);
    // Killed with kill -9 during its repair: still 'running', silent since.
    execute(
        "INSERT INTO reconcile_runs (range_from, range_to, closed_before, mode, run_key,"
            + " started_at, heartbeat_at) VALUES ('"
            + from
            + "', '"
            + to
            + "', '"
            + to
            + "', 'repair', 'nightly-2', now() - interval '20 minutes',"
            + " now() - interval '10 minutes')");
    long died = lastRunId();

    ReconcileReport report = reconcile("--from", "5m", "--to", "now", "--run-key", "nightly-2");

    assertThat(runRow(died, "status || ' ' || (finished_at IS NOT NULL)"))
        .isEqualTo("abandoned true");
    assertThat(report.range())
        .as("the range its key first resolved, not a new one")
        .isEqualTo(new TimeRange(from, to));
    assertThat(report.refusal()).isEmpty();
    assertThat(table()).isEqualTo(truth);
    assertThat(
            runRow(report.runId(), "status || ' ' || run_key || ' ' || (heartbeat_at IS NOT NULL)"))
        .isEqualTo("finished nightly-2 true");
  }

  @Test
  void refusesToRepairWhenItReadsNothingFromAnEmptyTopic() throws Exception {
    insertRow("alpha", 1, 4, 1);
    insertRow("bravo", 2, 3, 0);
    Map<String, List<Long>> before = table();

    ReconcileReport report = reconcile("--from", iso(base), "--to", iso(base + 10 * MINUTE));

    assertThat(report.refused()).isTrue();
    assertThat(report.exitStatus()).isEqualTo(ReconcileReport.EXIT_REFUSED);
    assertThat(report.refusal())
        .hasValueSatisfying(
            why -> assertThat(why).contains("read no record of topic '" + topic + "'"));
    assertThat(report.summary()).contains("REFUSED").contains("read no record");
    assertThat(table()).isEqualTo(before);
    assertThat(runRow(report.runId(), "status || ' ' || (refused_reason LIKE 'read no record%')"))
        .isEqualTo("refused true");
  }

  @Test
  void refusesToRepairFromATopicThatDoesNotExist() throws Exception {
    produceKnownStream();
    writeTruthToTable();
    corrupt("alpha", 1, 5, 0);
    Map<String, List<Long>> before = table();
    String misnamed = "clickz-" + UUID.randomUUID();

    ReconcileReport report =
        reconcileTopic(misnamed, "--from", iso(base), "--to", iso(base + 10 * MINUTE));

    assertThat(report.refused()).isTrue();
    assertThat(report.refusal())
        .hasValueSatisfying(
            why -> assertThat(why).contains("topic '" + misnamed + "' does not exist"));
    assertThat(report.coverage().exists()).isFalse();
    assertThat(table()).isEqualTo(before);
    assertThat(runRow(report.runId(), "status || ' ' || (coverage->>'exists')"))
        .isEqualTo("refused false");
  }

  @Test
  void refusesARepairThatRemovesMoreThanTheShareUnlessForced() throws Exception {
    produceKnownStream();
    writeTruthToTable();
    corrupt("alpha", 1, 1000, 0);
    corrupt("bravo", 2, -1, 0);
    Map<String, List<Long>> before = table();

    ReconcileReport preview =
        reconcile("--from", iso(base), "--to", iso(base + 10 * MINUTE), "--dry-run");
    ReconcileReport refused = reconcile("--from", iso(base), "--to", iso(base + 10 * MINUTE));

    assertThat(preview.refused()).isTrue();
    assertThat(preview.minutesDiffering()).isEqualTo(2);

    assertThat(refused.refused()).isTrue();
    assertThat(refused.clicksRemoved()).isEqualTo(1000);
    assertThat(refused.refusal())
        .hasValueSatisfying(
            why ->
                assertThat(why)
                    .contains(
                        "remove 1000 of the "
                            + refused.storedClicksChecked()
                            + " clicks stored in the checked rows of click_counts")
                    .contains("--force"));
    assertThat(table()).isEqualTo(before);
    assertThat(
            runRow(
                refused.runId(),
                "status || ' ' || (SELECT count(*) FILTER (WHERE repaired) || '/' || count(*)"
                    + " FROM reconcile_drift WHERE run_id = "
                    + refused.runId()
                    + ")"))
        .isEqualTo("refused 0/2");

    ReconcileReport forced =
        reconcile("--from", iso(base), "--to", iso(base + 10 * MINUTE), "--force");

    assertThat(forced.refused()).isFalse();
    assertThat(forced.minutesDiffering()).isEqualTo(2);
    assertThat(table()).isEqualTo(truth);
  }

  @Test
  void aLargerShareLetsTheSameRepairThrough() throws Exception {
    produceKnownStream();
    writeTruthToTable();
    corrupt("alpha", 1, 100, 0);

    ReconcileReport report =
        reconcile(
            "--from", iso(base), "--to", iso(base + 10 * MINUTE), "--max-removed-share", "0.5");

    assertThat(report.refused()).isFalse();
    assertThat(table()).isEqualTo(truth);
  }

  private static Map<String, List<Long>> hourly() throws Exception {
    return rows(
        "SELECT code || '@' || (extract(epoch FROM hour) * 1000)::bigint, clicks, bot_clicks,"
            + " visitors FROM click_hourly");
  }

  private static Map<String, List<Long>> daily() throws Exception {
    return rows(
        "SELECT code || '@' || (extract(epoch FROM day::timestamp AT TIME ZONE 'UTC') *"
            + " 1000)::bigint, clicks, bot_clicks, visitors FROM click_daily");
  }

  private static Map<String, List<Long>> breakdowns(String... dimensions) throws Exception {
    return rows(
        "SELECT code || '@' || (extract(epoch FROM hour) * 1000)::bigint || '@' || dimension || '@'"
            + " || value, clicks FROM click_dimensions_hourly WHERE dimension IN ('"
            + String.join("','", dimensions)
            + "')");
  }

  /** The stored day sketches as hex: code@day start → sketch. */
  private static Map<String, String> daySketches() {
    return POSTGRES.texts(ClickOracle.STORED_DAY_SKETCHES);
  }

  private static Map<String, List<Long>> rows(String sql) {
    return POSTGRES.rows(sql);
  }

  // ---- the stream ----------------------------------------------------------------------------

  private void produceKnownStream() {
    produceKnownStream(true);
  }

  /**
   * Ten minutes of clicks on every link, sent in time order; with {@code lateCopiesAndBadRecords},
   * then 5% of them again and three malformed records, all stamped minutes before the last click.
   */
  private void produceKnownStream(boolean lateCopiesAndBadRecords) {
    Random random = new Random(11);
    List<ClickEvent> sent = new ArrayList<>();
    for (int minute = 0; minute < 10; minute++) {
      for (String code : CODES) {
        int humans = 1 + random.nextInt(8);
        int bots = random.nextInt(3);
        for (int i = 0; i < humans + bots; i++) {
          long ts = base + minute * MINUTE + random.nextInt((int) MINUTE);
          ClickEvent e = ClickEvents.minimal(UUID.randomUUID(), code, ts, i >= humans);
          send(e);
          sent.add(e);
          counted
              .computeIfAbsent(key(code, base + minute * MINUTE), k -> new long[2])[
              e.head() ? 1 : 0]++;
        }
      }
    }
    counted.forEach((k, t) -> truth.put(k, List.of(t[0], t[1])));
    if (!lateCopiesAndBadRecords) {
      flushAcknowledged();
      return;
    }
    for (ClickEvent e : sent) {
      if (random.nextInt(100) < 5) {
        send(e);
        duplicates++;
      }
    }
    sendRaw("not json");
    sendRaw("{\"v\":1,\"click_id\":\"nope\",\"code\":\"alpha\",\"ts\":" + (base + 1000) + "}");
    sendRaw(
        "{\"v\":4,\"click_id\":\""
            + UUID.randomUUID()
            + "\",\"code\":\"alpha\",\"ts\":"
            + (base + 1000)
            + "}");
    flushAcknowledged();
  }

  /** How far the fast host's clock runs ahead, and the slow host's behind. */
  private static final long SKEW = 15 * MINUTE;

  /**
   * Three hosts writing people's clicks, in the order they happen, for 45 minutes from {@link
   * #base}: one with a right clock, one 15 minutes fast, one 15 minutes slow. Every click counts at
   * the time its host stamped, which the truth holds. Returns, per record, its partition, offset,
   * the host's skew and when it was written.
   */
  private List<long[]> produceStreamFromSkewedClocks() {
    Random random = new Random(17);
    long[] offsets = new long[PARTITIONS];
    List<long[]> sends = new ArrayList<>();
    for (long written = base; written < base + 45 * MINUTE; written += MINUTE / 2) {
      for (long skew : new long[] {-SKEW, 0, SKEW}) {
        for (int i = 0; i < 2; i++) {
          String code = CODES[random.nextInt(CODES.length)];
          long ts = written + skew + random.nextInt(1000);
          int partition = produced % PARTITIONS;
          send(ClickEvents.minimal(UUID.randomUUID(), code, ts, false));
          sends.add(new long[] {partition, offsets[partition]++, skew, written});
          counted.computeIfAbsent(key(code, ts / MINUTE * MINUTE), k -> new long[2])[0]++;
        }
      }
    }
    counted.forEach((k, t) -> truth.put(k, List.of(t[0], t[1])));
    flushAcknowledged();
    return sends;
  }

  private void deleteRecordsBeforeOffset(int partition, long offset) throws Exception {
    TopicPartition tp = new TopicPartition(topic, partition);
    try (Admin admin =
        Admin.create(
            Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, KAFKA.bootstrapServers()))) {
      admin.deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(offset))).all().get();
    }
  }

  /**
   * Sends a click to the partitions in turn: every link's clicks spread over all of them, as the
   * producer spreads keyless click records, but in a way the test knows.
   */
  /** {@code count} people's clicks on alpha, a minute apart from {@code start}. */
  private void sendPeoplesClicks(
      long start, int count, IntFunction<String> referrer, IntFunction<String> country) {
    for (int i = 0; i < count; i++) {
      send(
          ClickEvent.builder(UUID.randomUUID(), "alpha", start + i * MINUTE)
              .visitor(ClickEvents.visitor("v" + i))
              .userAgent(ClickEvents.DESKTOP_BROWSER)
              .referrerDomain(referrer.apply(i))
              .country(country.apply(i))
              .build());
    }
    flushAcknowledged();
  }

  private void send(ClickEvent e) {
    sends.add(producer.send(ClickEvents.inPartition(topic, produced % PARTITIONS, e)));
    produced++;
  }

  /**
   * Sends what the producer holds and checks that the broker took every record, so that a record
   * lost on its way fails here and not as a drift the recount seems to have found.
   */
  private void flushAcknowledged() {
    producer.flush();
    try {
      for (Future<RecordMetadata> sent : sends) {
        sent.get();
      }
    } catch (ExecutionException e) {
      throw new AssertionError("the broker did not take a record of the test's stream", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
    sends.clear();
  }

  /**
   * Deletes a partition's records before its first one at or after {@code timestamp} (all of them
   * when there is none), as retention does, and returns that first retained record's timestamp (-1
   * if none).
   */
  private long deleteRecordsBefore(int partition, long timestamp) throws Exception {
    TopicPartition tp = new TopicPartition(topic, partition);
    try (Admin admin =
        Admin.create(
            Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, KAFKA.bootstrapServers()))) {
      ListOffsetsResult.ListOffsetsResultInfo first =
          admin
              .listOffsets(Map.of(tp, OffsetSpec.forTimestamp(timestamp)))
              .partitionResult(tp)
              .get();
      long cut =
          first.offset() >= 0
              ? first.offset()
              : admin
                  .listOffsets(Map.of(tp, OffsetSpec.latest()))
                  .partitionResult(tp)
                  .get()
                  .offset();
      assertThat(cut).isPositive();
      admin.deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(cut))).all().get();
      assertThat(
              admin
                  .listOffsets(Map.of(tp, OffsetSpec.earliest()))
                  .partitionResult(tp)
                  .get()
                  .offset())
          .isEqualTo(cut);
      return first.offset() >= 0 ? first.timestamp() : -1;
    }
  }

  private void sendRaw(String value) {
    sends.add(
        producer.send(
            new ProducerRecord<>(
                topic, null, base + 1000, "broken", value.getBytes(StandardCharsets.UTF_8))));
  }

  private ReconcileReport reconcile(String... flags) throws Exception {
    return reconcileTopic(topic, flags);
  }

  private ReconcileReport reconcileTopic(String topic, String... flags) throws Exception {
    return reconcileTopic(topic, now, flags);
  }

  private ReconcileReport reconcileTopic(String topic, Instant at, String... flags)
      throws Exception {
    return ReconcileJob.run(
        StreamExecutionEnvironment.getExecutionEnvironment(), optionsFor(topic, flags), at);
  }

  private ReconcileOptions options(String... flags) {
    return optionsFor(topic, flags);
  }

  private static ReconcileOptions optionsFor(String topic, String... flags) {
    List<String> args = ReconcileArgs.connectedTo(KAFKA, POSTGRES, topic, "--parallelism", "2");
    args.addAll(List.of(flags));
    return ReconcileOptions.parse(args.toArray(String[]::new));
  }

  private static long lastRunId() throws Exception {
    try (Connection c = POSTGRES.connect();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT max(id) FROM reconcile_runs")) {
      rs.next();
      return rs.getLong(1);
    }
  }

  // ---- the table -----------------------------------------------------------------------------

  private void writeTruthToTable() throws Exception {
    try (Connection c = POSTGRES.connect();
        PreparedStatement ps =
            c.prepareStatement(
                "INSERT INTO click_counts (code, minute, clicks, bot_clicks) VALUES (?, ?, ?,"
                    + " ?)")) {
      for (Map.Entry<String, List<Long>> e : truth.entrySet()) {
        String[] parts = e.getKey().split("@");
        ps.setString(1, parts[0]);
        ps.setTimestamp(2, new Timestamp(Long.parseLong(parts[1])));
        ps.setLong(3, e.getValue().get(0));
        ps.setLong(4, e.getValue().get(1));
        ps.addBatch();
      }
      ps.executeBatch();
    }
  }

  private void corrupt(String code, int minute, int humans, int bots) throws Exception {
    execute(
        "UPDATE click_counts SET clicks = GREATEST(clicks + "
            + humans
            + ", 0), bot_clicks = GREATEST(bot_clicks + "
            + bots
            + ", 0) WHERE code = '"
            + code
            + "' AND minute = "
            + minuteSql(minute));
  }

  private void deleteRow(String code, int minute) throws Exception {
    execute(
        "DELETE FROM click_counts WHERE code = '" + code + "' AND minute = " + minuteSql(minute));
  }

  private void insertRow(String code, int minute, long humans, long bots) throws Exception {
    insertRowAt(code, base + minute * MINUTE, humans, bots);
  }

  private void insertRowAt(String code, long minuteStart, long humans, long bots) throws Exception {
    execute(
        "INSERT INTO click_counts (code, minute, clicks, bot_clicks) VALUES ('"
            + code
            + "', to_timestamp("
            + minuteStart / 1000
            + "), "
            + humans
            + ", "
            + bots
            + ")");
  }

  private String minuteSql(int minute) {
    return "to_timestamp(" + (base + minute * MINUTE) / 1000 + ")";
  }

  private long rowTotal(String code, int minute) {
    List<Long> t = truth.get(key(code, base + minute * MINUTE));
    return t.get(0) + t.get(1);
  }

  private boolean charlieHadBots() {
    return truth.get(key("charlie", base + 3 * MINUTE)).get(1) > 0;
  }

  private static void execute(String sql) throws Exception {
    try (Connection c = POSTGRES.connect();
        Statement s = c.createStatement()) {
      s.execute(sql);
    }
  }

  private static String runRow(long runId, String expression) throws Exception {
    try (Connection c = POSTGRES.connect();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery("SELECT " + expression + " FROM reconcile_runs WHERE id = " + runId)) {
      rs.next();
      return rs.getString(1);
    }
  }

  private static long driftRows(long runId) throws Exception {
    try (Connection c = POSTGRES.connect();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery("SELECT count(*) FROM reconcile_drift WHERE run_id = " + runId)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private static Map<String, List<Long>> table() throws Exception {
    Map<String, List<Long>> rows = new HashMap<>();
    try (Connection c = POSTGRES.connect();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery("SELECT code, minute, clicks, bot_clicks FROM click_counts")) {
      while (rs.next()) {
        rows.put(
            key(rs.getString(1), rs.getTimestamp(2).getTime()),
            List.of(rs.getLong(3), rs.getLong(4)));
      }
    }
    return rows;
  }

  private static String key(String code, long minute) {
    return code + "@" + minute;
  }

  private static String iso(long millis) {
    return Instant.ofEpochMilli(millis).toString();
  }
}
