package io.tally.counting.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

import io.tally.counting.Clicks;
import io.tally.counting.ConnectionOptions;
import io.tally.counting.records.AggregateRow;
import io.tally.counting.records.DeadLetter;
import io.tally.counting.records.DimensionCount;
import io.tally.counting.records.KeptValues;
import io.tally.counting.records.MinuteCount;
import io.tally.counting.records.PeriodTotals;
import io.tally.testing.PostgresExtension;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.util.CloseableIterator;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import picocli.CommandLine;

/**
 * The job's aggregate writer on a real PostgreSQL whose driver rewrites each batch into one
 * multi-row upsert per table ({@code reWriteBatchedInserts=true}): a batch writes every table in
 * one transaction, a key written twice in it once with its last totals; a row PostgreSQL refuses
 * becomes a dead letter while the rest of its batch is written; a database that does not answer
 * fails the job.
 */
class WriteAggregatesITCase {

  @RegisterExtension static final PostgresExtension POSTGRES = new PostgresExtension();

  @RegisterExtension
  static final MiniClusterExtension FLINK =
      new MiniClusterExtension(
          new MiniClusterResourceConfiguration.Builder().setNumberSlotsPerTaskManager(1).build());

  private static final long HOUR = 1_795_996_800_000L; // an hour boundary
  private static final long DAY = HOUR - HOUR % 86_400_000L;

  @BeforeEach
  void setUp() {
    POSTGRES.truncateAll();
  }

  @Test
  void writesEveryTableOfABatchAndOnlyTheLastTotalsOfAKeyWrittenTwice() throws Exception {
    run(
        AggregateRow.of(new MinuteCount("abc", HOUR, 3, 0)),
        AggregateRow.of(new MinuteCount("xyz", HOUR, 1, 1)),
        AggregateRow.hourOf(new PeriodTotals("abc", HOUR, 3, 0, 2)),
        AggregateRow.dayOf(new PeriodTotals("abc", DAY, 3, 0, 2)),
        AggregateRow.hourOf(new DimensionCount("abc", HOUR, "country", "DE", 3)),
        AggregateRow.dayOf(new DimensionCount("abc", DAY, "country", "DE", 3)),
        // The same minute, hour and breakdown again, later and larger.
        AggregateRow.of(new MinuteCount("abc", HOUR, 5, 1)),
        AggregateRow.hourOf(new PeriodTotals("abc", HOUR, 5, 1, 3)),
        AggregateRow.hourOf(new DimensionCount("abc", HOUR, "country", "DE", 5)));

    assertThat(POSTGRES.rows("SELECT code, clicks, bot_clicks FROM click_counts"))
        .isEqualTo(Map.of("abc", List.of(5L, 1L), "xyz", List.of(1L, 1L)));
    assertThat(POSTGRES.rows("SELECT code, clicks, bot_clicks, visitors FROM click_hourly"))
        .isEqualTo(Map.of("abc", List.of(5L, 1L, 3L)));
    assertThat(POSTGRES.rows("SELECT code, clicks, bot_clicks, visitors FROM click_daily"))
        .isEqualTo(Map.of("abc", List.of(3L, 0L, 2L)));
    assertThat(POSTGRES.rows("SELECT value, clicks FROM click_dimensions_hourly"))
        .isEqualTo(Map.of("DE", List.of(5L)));
    assertThat(POSTGRES.rows("SELECT value, clicks FROM click_dimensions_daily"))
        .isEqualTo(Map.of("DE", List.of(3L)));
  }

  @Test
  void aBreakdownsKeptValuesDropTheRowsOfItBeforeThemInTheSameBatch() throws Exception {
    run(
        // Written full, keeping a and b; then c, of less rank, displaces b before the batch is
        // sent.
        AggregateRow.hourOf(new DimensionCount("abc", HOUR, "referrer", "a", 1)),
        AggregateRow.hourOf(new DimensionCount("abc", HOUR, "referrer", "b", 1)),
        AggregateRow.hourOf(new DimensionCount("abc", HOUR, "referrer", "(other)", 1)),
        AggregateRow.hourOf(new KeptValues("abc", HOUR, "referrer", new String[] {"a", "c"})),
        AggregateRow.hourOf(new DimensionCount("abc", HOUR, "referrer", "a", 1)),
        AggregateRow.hourOf(new DimensionCount("abc", HOUR, "referrer", "c", 1)),
        AggregateRow.hourOf(new DimensionCount("abc", HOUR, "referrer", "(other)", 2)),
        AggregateRow.hourOf(new DimensionCount("abc", HOUR, "country", "DE", 4)));

    assertThat(POSTGRES.rows("SELECT value, clicks FROM click_dimensions_hourly"))
        .as("the displaced value's row is not written back after the breakdown is cleared")
        .isEqualTo(
            Map.of("a", List.of(1L), "c", List.of(1L), "(other)", List.of(2L), "DE", List.of(4L)));
  }

  @Test
  void aRecountReplacesItsPeriodsRowsAndAClearingMetAgainInTheBatchSparesNoneOfThem()
      throws Exception {
    // An earlier run's hour: more people and a browser of another name.
    run(
        AggregateRow.hourOf(new PeriodTotals("abc", HOUR, 4, 0, 3)),
        AggregateRow.hourOf(new DimensionCount("abc", HOUR, "browser", "Chrome", 4)),
        AggregateRow.hourOf(new DimensionCount("abc", HOUR, "browser", "Old name", 1)));

    run(
        // Recounted whole: lower totals replace the row, the breakdown is emptied and written.
        AggregateRow.replacingHour(new PeriodTotals("abc", HOUR, 2, 2, 2)),
        AggregateRow.hourOf(new KeptValues("abc", HOUR, "browser", new String[0])),
        AggregateRow.hourOf(new DimensionCount("abc", HOUR, "browser", "Chrome", 2)),
        // Before the batch is sent a value is displaced: its kept values must not spare Chrome's
        // older, higher row.
        AggregateRow.hourOf(new KeptValues("abc", HOUR, "browser", new String[] {"Chrome"})),
        AggregateRow.hourOf(new DimensionCount("abc", HOUR, "browser", "Chrome", 2)),
        AggregateRow.hourOf(new DimensionCount("abc", HOUR, "browser", "(other)", 1)),
        // Raised after the replacement in the same batch, as a later write of the hour does.
        AggregateRow.hourOf(new PeriodTotals("abc", HOUR, 3, 2, 2)));

    assertThat(POSTGRES.rows("SELECT code, clicks, bot_clicks, visitors FROM click_hourly"))
        .isEqualTo(Map.of("abc", List.of(3L, 2L, 2L)));
    assertThat(POSTGRES.rows("SELECT value, clicks FROM click_dimensions_hourly"))
        .isEqualTo(Map.of("Chrome", List.of(2L), "(other)", List.of(1L)));
  }

  @Test
  void aDaysVisitorSketchGoesWithItsVisitorsAndNeverGivesWayToOneOfFewer() throws Exception {
    try (Connection db = POSTGRES.connect();
        Statement sql = db.createStatement()) {
      sql.execute(
          "INSERT INTO click_daily (code, day, clicks, bot_clicks, visitors) VALUES ('old',"
              + " DATE '"
              + AggregateUpserts.day(DAY)
              + "', 5, 0, 2)");
    }
    run(AggregateRow.dayOf(new PeriodTotals("abc", DAY, 3, 0, 2, Clicks.visitorSketch(1, 2))));

    // A job that lost its state and counts the day again from part of it, and the first sketch
    // of a day stored before sketches existed, with no count raised.
    run(
        AggregateRow.dayOf(new PeriodTotals("abc", DAY, 4, 0, 1, Clicks.visitorSketch(1))),
        AggregateRow.dayOf(new PeriodTotals("old", DAY, 5, 0, 2, Clicks.visitorSketch(7, 8))));

    assertThat(sketches())
        .isEqualTo(
            Map.of("abc", hex(Clicks.visitorSketch(1, 2)), "old", hex(Clicks.visitorSketch(7, 8))));
    assertThat(POSTGRES.rows("SELECT code, clicks, visitors FROM click_daily WHERE code = 'abc'"))
        .isEqualTo(Map.of("abc", List.of(4L, 2L)));

    run(AggregateRow.dayOf(new PeriodTotals("abc", DAY, 4, 0, 3, Clicks.visitorSketch(1, 2, 3))));

    assertThat(sketches()).containsEntry("abc", hex(Clicks.visitorSketch(1, 2, 3)));

    // A fourth visitor without a key: the day can no longer answer for all of its visitors.
    run(AggregateRow.dayOf(new PeriodTotals("abc", DAY, 5, 0, 4, null)));

    assertThat(sketches()).containsEntry("abc", null);
  }

  @Test
  void aDaysTotalsWithoutItsSketchRaiseTheRowAndLeaveTheStoredSketch() throws Exception {
    run(AggregateRow.dayOf(new PeriodTotals("abc", DAY, 3, 0, 2, Clicks.visitorSketch(1, 2))));

    // Later clicks of the same two visitors, then in the same batch one more visitor and a copy of
    // the earlier totals that arrives after it.
    run(AggregateRow.dayOf(PeriodTotals.keepingSketch("abc", DAY, 5, 1, 2)));
    assertThat(POSTGRES.rows("SELECT code, clicks, bot_clicks, visitors FROM click_daily"))
        .isEqualTo(Map.of("abc", List.of(5L, 1L, 2L)));
    assertThat(sketches()).containsEntry("abc", hex(Clicks.visitorSketch(1, 2)));

    run(
        AggregateRow.dayOf(new PeriodTotals("abc", DAY, 6, 1, 3, Clicks.visitorSketch(1, 2, 3))),
        AggregateRow.dayOf(PeriodTotals.keepingSketch("abc", DAY, 5, 1, 2)));
    assertThat(POSTGRES.rows("SELECT code, clicks, bot_clicks, visitors FROM click_daily"))
        .isEqualTo(Map.of("abc", List.of(6L, 1L, 3L)));
    assertThat(sketches()).containsEntry("abc", hex(Clicks.visitorSketch(1, 2, 3)));

    // A day first written without its sketch has none, as one whose visitors brought no key.
    run(AggregateRow.dayOf(PeriodTotals.keepingSketch("new", DAY, 1, 0, 1)));
    assertThat(sketches()).containsEntry("new", null);
  }

  @Test
  void theEndOfACountingRoundSendsTheBatchWithoutWaitingForItsFlushInterval() throws Exception {
    try (var harness =
        new OneInputStreamOperatorTestHarness<>(
            new WriteAggregates(
                connection(POSTGRES.jdbcUrl()).jdbc(),
                AggregateTables.READ_SIDE,
                1000,
                Duration.ofHours(1),
                0))) {
      harness.open();
      harness.processElement(AggregateRow.of(new MinuteCount("abc", HOUR, 3, 0)), 0);
      assertThat(POSTGRES.rows("SELECT code, clicks FROM click_counts")).isEmpty();

      harness.processElement(AggregateRow.END_OF_ROUND, 0);

      assertThat(POSTGRES.rows("SELECT code, clicks FROM click_counts"))
          .isEqualTo(Map.of("abc", List.of(3L)));
    }
  }

  private static Map<String, String> sketches() {
    return POSTGRES.texts("SELECT code, encode(visitor_sketch, 'hex') FROM click_daily");
  }

  private static String hex(byte[] bytes) {
    return HexFormat.of().formatHex(bytes);
  }

  @Test
  void rowsPostgresRefusesBecomeDeadLettersAndTheRestOfTheirBatchIsWritten() throws Exception {
    // Random letters: PostgreSQL compresses an index entry, and a repeated letter would fit.
    String longValue =
        new Random(7)
            .ints(3000, 'a', 'z' + 1)
            .collect(StringBuilder::new, StringBuilder::appendCodePoint, StringBuilder::append)
            .toString();
    List<DeadLetter> letters =
        run(
            AggregateRow.of(new MinuteCount("abc", HOUR, 3, 0)),
            AggregateRow.hourOf(new PeriodTotals("abc", HOUR, 3, 0, 2)),
            AggregateRow.hourOf(new DimensionCount("abc", HOUR, "country", "DE", 1)),
            // NUL in text, an index entry over PostgreSQL's limit, a check the stand-in fails too.
            AggregateRow.hourOf(new DimensionCount("abc", HOUR, "referrer", "a\u0000b", 1)),
            AggregateRow.dayOf(new DimensionCount("abc", DAY, "referrer", longValue, 1)),
            AggregateRow.hourOf(new DimensionCount("abc", HOUR, "no such dimension", "x", 3)));

    assertThat(POSTGRES.rows("SELECT code, clicks FROM click_counts"))
        .isEqualTo(Map.of("abc", List.of(3L)));
    assertThat(POSTGRES.rows("SELECT code, clicks FROM click_hourly"))
        .isEqualTo(Map.of("abc", List.of(3L)));
    String nulStandIn =
        new DimensionCount("abc", HOUR, "referrer", "a\u0000b", 1).standIn().value();
    String longStandIn = new DimensionCount("abc", DAY, "referrer", longValue, 1).standIn().value();
    assertThat(POSTGRES.rows("SELECT value, clicks FROM click_dimensions_hourly"))
        .isEqualTo(Map.of("DE", List.of(1L), nulStandIn, List.of(1L)));
    assertThat(POSTGRES.rows("SELECT value, clicks FROM click_dimensions_daily"))
        .isEqualTo(Map.of(longStandIn, List.of(1L)));
    assertThat(nulStandIn).startsWith(DimensionCount.STAND_IN_PREFIX);

    assertThat(letters)
        .extracting(DeadLetter::reason)
        .containsOnly(DeadLetter.REFUSED_ROW)
        .hasSize(3);
    assertThat(letters)
        .extracting(DeadLetter::topic, l -> l.detail().substring(0, 5))
        .containsExactlyInAnyOrder(
            tuple("click_dimensions_hourly", "22021"),
            tuple("click_dimensions_daily", "54000"),
            tuple("click_dimensions_hourly", "23514"));
    assertThat(letters)
        .filteredOn(l -> l.detail().startsWith("23514"))
        .singleElement()
        .satisfies(
            l -> {
              assertThat(l.detail()).endsWith("set aside");
              assertThat(new String(l.raw(), StandardCharsets.UTF_8))
                  .isEqualTo(
                      "{\"code\":\"abc\",\"periodStart\":"
                          + HOUR
                          + ",\"dimension\":\"no such dimension\",\"value\":\"x\",\"clicks\":3}");
            });
  }

  @Test
  void aRefusedRowIsReportedOnceAndItsLaterTotalsGoToItsStandIn() throws Exception {
    DimensionCount refused = new DimensionCount("abc", HOUR, "referrer", "a\u0000b", 2);

    // A batch of one row: each total is written on its own, as when they arrive far apart.
    List<DeadLetter> letters =
        run(
            1,
            AggregateRow.hourOf(refused),
            AggregateRow.hourOf(new DimensionCount("abc", HOUR, "referrer", "a\u0000b", 5)),
            AggregateRow.hourOf(new DimensionCount("abc", HOUR, "referrer", "ok.example", 4)));

    assertThat(letters).hasSize(1);
    assertThat(POSTGRES.rows("SELECT value, clicks FROM click_dimensions_hourly"))
        .isEqualTo(Map.of(refused.standIn().value(), List.of(5L), "ok.example", List.of(4L)));
  }

  @Test
  void aDatabaseThatDoesNotAnswerFailsTheJobInsteadOfDroppingRows() {
    assertThatThrownBy(
            () ->
                run(
                    "jdbc:postgresql://127.0.0.1:1/postgres",
                    1000,
                    AggregateRow.of(new MinuteCount("abc", HOUR, 3, 0))))
        .hasStackTraceContaining("aggregate rows failed 1 times");
  }

  private static List<DeadLetter> run(AggregateRow... rows) throws Exception {
    return run(1000, rows);
  }

  private static List<DeadLetter> run(int batchSize, AggregateRow... rows) throws Exception {
    return run(POSTGRES.jdbcUrl(), batchSize, rows);
  }

  /** The click job's login to {@code jdbcUrl}. */
  private static ConnectionOptions connection(String jdbcUrl) {
    ConnectionOptions connection = new ConnectionOptions();
    new CommandLine(connection)
        .parseArgs(
            "--jdbc-url",
            jdbcUrl,
            "--jdbc-user",
            POSTGRES.loginWith("tally_click_job"),
            "--jdbc-password",
            PostgresExtension.LOGIN_PASSWORD);
    return connection;
  }

  /** Writes the rows through the writer in a job of their own; returns its dead letters. */
  private static List<DeadLetter> run(String jdbcUrl, int batchSize, AggregateRow... rows)
      throws Exception {
    // One batch unless told otherwise: it waits longer than the job runs.
    ConnectionOptions connection = connection(jdbcUrl);
    Configuration conf = new Configuration();
    conf.setString("restart-strategy.type", "none");
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    env.setParallelism(1);
    // No retries: the unanswered database's test needs the first failure.
    List<DeadLetter> letters = new ArrayList<>();
    try (CloseableIterator<DeadLetter> out =
        env.fromData(rows)
            .transform(
                "write",
                TypeInformation.of(DeadLetter.class),
                new WriteAggregates(
                    connection.jdbc(),
                    AggregateTables.READ_SIDE,
                    batchSize,
                    Duration.ofMinutes(10),
                    0))
            .executeAndCollect("aggregates-writer")) {
      out.forEachRemaining(letters::add);
    }
    return letters;
  }
}
