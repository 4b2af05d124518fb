package io.tally.clickjob.io;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tally.clickjob.ClickJobOptions;
import io.tally.clickjob.Clicks;
import io.tally.clickjob.records.AggregateRow;
import io.tally.clickjob.records.DimensionCount;
import io.tally.clickjob.records.MinuteCount;
import io.tally.clickjob.records.PeriodTotals;
import io.tally.testing.PostgresExtension;
import java.sql.Connection;
import java.sql.Statement;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The job's aggregate sink on a real PostgreSQL whose driver rewrites each batch into one multi-row
 * upsert per table ({@code reWriteBatchedInserts=true}): a batch writes every table in one
 * transaction, a key written twice in it once with its last totals, and a batch that fails anywhere
 * leaves nothing behind.
 */
class AggregatesSinkITCase {

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

  private static Map<String, String> sketches() {
    return POSTGRES.texts("SELECT code, encode(visitor_sketch, 'hex') FROM click_daily");
  }

  private static String hex(byte[] bytes) {
    return HexFormat.of().formatHex(bytes);
  }

  @Test
  void aBatchThatFailsInOneTableLeavesNoRowOfAnyTable() {
    assertThatThrownBy(
            () ->
                run(
                    AggregateRow.of(new MinuteCount("abc", HOUR, 3, 0)),
                    AggregateRow.hourOf(new PeriodTotals("abc", HOUR, 3, 0, 2)),
                    AggregateRow.hourOf(
                        new DimensionCount("abc", HOUR, "no such dimension", "x", 3))))
        .hasStackTraceContaining("click_dimensions_hourly");

    assertThat(POSTGRES.rows("SELECT code, clicks FROM click_counts")).isEmpty();
    assertThat(POSTGRES.rows("SELECT code, clicks FROM click_hourly")).isEmpty();
  }

  private static void run(AggregateRow... rows) throws Exception {
    String url =
        POSTGRES.jdbcUrl()
            + (POSTGRES.jdbcUrl().contains("?") ? "&" : "?")
            + "reWriteBatchedInserts=true";
    // One batch: far more rows than these fit in it, and it waits longer than the job runs.
    ClickJobOptions options =
        ClickJobOptions.parse(
            "--jdbc-url",
            url,
            "--jdbc-user",
            POSTGRES.user(),
            "--jdbc-password",
            POSTGRES.password(),
            "--sink-batch-size",
            "1000",
            "--sink-flush-interval",
            "10m");
    Configuration conf = new Configuration();
    conf.setString("restart-strategy.type", "none");
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    env.setParallelism(1);
    // No retries: the failing batch's test needs the first failure.
    env.fromData(rows)
        .sinkTo(
            new AggregatesSink(
                options.connection().jdbc(),
                options.sinkBatchSize(),
                options.sinkFlushInterval(),
                0));
    env.execute("aggregates-sink");
  }
}
