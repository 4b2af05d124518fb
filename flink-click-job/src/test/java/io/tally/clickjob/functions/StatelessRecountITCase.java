package io.tally.clickjob.functions;

import static io.tally.counting.Clicks.MINUTE;
import static io.tally.counting.Clicks.at;
import static io.tally.counting.Clicks.referred;
import static org.assertj.core.api.Assertions.assertThat;

import io.tally.clickjob.ClickCountJobGraphs;
import io.tally.clickjob.ClickJobOptions;
import io.tally.counting.Clicks;
import io.tally.counting.ConnectionOptions;
import io.tally.counting.periods.ClickTally;
import io.tally.counting.periods.LinkPeriods;
import io.tally.counting.periods.MinuteTotals;
import io.tally.counting.periods.Recount;
import io.tally.counting.records.AggregateRow;
import io.tally.counting.records.Click;
import io.tally.counting.records.DeadLetter;
import io.tally.counting.records.DimensionCount;
import io.tally.counting.sql.AggregateTables;
import io.tally.counting.sql.WriteAggregates;
import io.tally.testing.PostgresExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import picocli.CommandLine;

/**
 * The rows of a flooded breakdown, written to a real PostgreSQL as the job's own login, when the
 * same periods are counted twice: by a job started without state that recounts the open day its
 * earlier run wrote (the upgrade path of the runbook), and by a job restored from a checkpoint that
 * replays what came after it. Partials come in another order the second time; the breakdown must
 * hold exactly the values of least rank with their clicks and add up to its clicks, not keep the
 * rows of other values beside them.
 */
class StatelessRecountITCase {

  @RegisterExtension static final PostgresExtension POSTGRES = new PostgresExtension();

  private static final long HOUR_START = LinkPeriods.hourOf(at(0));
  private static final long DAY_START = LinkPeriods.dayOf(at(0));
  private static final long NOW = at(10 * MINUTE);
  private static final Duration EARLY = Duration.ofSeconds(2);

  /** Referrer hosts by rank: a full breakdown keeps the first ones. */
  private static final List<String> BY_RANK =
      IntStream.range(0, 8)
          .mapToObj(i -> "site" + i + ".example")
          .sorted(ClickTally.BY_RANK)
          .toList();

  private static final String R0 = BY_RANK.get(0);
  private static final String R1 = BY_RANK.get(1);
  private static final String R2 = BY_RANK.get(2);
  private static final String R3 = BY_RANK.get(3);

  private final List<KeyedOneInputStreamOperatorTestHarness<String, MinuteTotals, AggregateRow>>
      harnesses = new ArrayList<>();

  @BeforeEach
  void setUp() {
    POSTGRES.truncateAll();
  }

  @AfterEach
  void tearDown() throws Exception {
    for (var harness : harnesses) {
      harness.close();
    }
  }

  @Test
  void aFullBreakdownRecountedInAnotherOrderHoldsTheRecountsValuesAndAddsUpToItsClicks()
      throws Exception {
    // The earlier run, stopped while the hour was open: keeps R1 and R2, counts R3 under (other).
    var earlier = open(null);
    count(earlier, R1, R2, R3, R3, R3);
    RollupTurns.throughEveryTurn(earlier, EARLY);
    write(earlier);
    assertThat(values("click_dimensions_hourly", ClickTally.REFERRER))
        .isEqualTo(Map.of(R1, 1L, R2, 1L, DimensionCount.OTHER, 3L));

    // Started without state: the recount meets R3 first, and R0 came after the stop. Its (other)
    // is larger than the earlier run's, R2's row must go.
    var recount = open(null);
    count(recount, R3, R3, R3, R0, R1, R2);
    recount.processWatermark(HOUR_START + LinkPeriods.DAY);
    write(recount);

    Map<String, Long> expected = Map.of(R0, 1L, R1, 1L, DimensionCount.OTHER, 4L);
    assertThat(values("click_dimensions_hourly", ClickTally.REFERRER)).isEqualTo(expected);
    assertThat(values("click_dimensions_daily", ClickTally.REFERRER)).isEqualTo(expected);
    assertThat(POSTGRES.rows("SELECT code, clicks FROM click_hourly"))
        .isEqualTo(Map.of("abc", List.of(6L)));
  }

  @Test
  void aReplayAfterARestoreThatMeetsPartialsInAnotherOrderConvergesOnTheSameRows()
      throws Exception {
    var first = open(null);
    count(first, R3, R2, R3);
    OperatorSubtaskState checkpoint = ClickCountJobGraphs.checkpoint(first, 1);
    write(first);
    // After the checkpoint: R1 displaces R3, and the live rows reach PostgreSQL before a kill.
    count(first, R1, R3);
    RollupTurns.throughEveryTurn(first, EARLY);
    write(first);
    assertThat(values("click_dimensions_hourly", ClickTally.REFERRER))
        .as("before the kill")
        .isEqualTo(Map.of(R1, 1L, R2, 1L, DimensionCount.OTHER, 3L));

    // Restored, the replay meets what came after the checkpoint in another order, and more.
    var replay = open(checkpoint);
    count(replay, R3, R0, R1);
    replay.processWatermark(HOUR_START + LinkPeriods.DAY);
    write(replay);

    Map<String, Long> expected = Map.of(R0, 1L, R1, 1L, DimensionCount.OTHER, 4L);
    assertThat(values("click_dimensions_hourly", ClickTally.REFERRER)).isEqualTo(expected);
    assertThat(values("click_dimensions_daily", ClickTally.REFERRER)).isEqualTo(expected);
    assertThat(POSTGRES.rows("SELECT code, clicks FROM click_hourly"))
        .isEqualTo(Map.of("abc", List.of(6L)));
  }

  @Test
  void anUpgradeThatJudgesClicksOtherwiseReplacesWhatItRecountsWhole() throws Exception {
    List<String> ids = IntStream.range(0, 4).mapToObj(i -> "c" + i).toList();
    // The earlier run took all four for people on Chrome, and stopped in the hour.
    var earlier = open(null);
    for (String id : ids) {
      count(earlier, Clicks.click(id, "abc", at(MINUTE)));
    }
    RollupTurns.throughEveryTurn(earlier, EARLY);
    write(earlier);
    assertThat(totals("click_hourly")).isEqualTo(List.of(4L, 0L));

    // The new release takes two of them for crawlers. Started without state, it recounts the day.
    var recount = open(null, Recount.whole(DAY_START, NOW, MINUTE));
    for (int i = 0; i < ids.size(); i++) {
      Click click =
          i % 2 == 0
              ? Clicks.click(ids.get(i), "abc", at(MINUTE))
              : Clicks.botClick(ids.get(i), "abc", at(MINUTE));
      count(recount, click);
    }
    RollupTurns.throughEveryTurn(recount, EARLY);
    assertThat(recount.extractOutputValues()).as("held while the recount is not whole").isEmpty();

    // The hour closes and is whole; the day is once the run has caught up.
    recount.processWatermark(HOUR_START + LinkPeriods.HOUR);
    recount.processWatermark(NOW);
    RollupTurns.throughEveryTurn(recount, EARLY);
    write(recount);

    for (String table : List.of("click_hourly", "click_daily")) {
      assertThat(totals(table)).as(table).isEqualTo(List.of(2L, 2L));
    }
    assertThat(totals("click_counts")).isEqualTo(List.of(2L, 2L));
    for (String table : List.of("click_dimensions_hourly", "click_dimensions_daily")) {
      assertThat(values(table, ClickTally.BROWSER)).as(table).isEqualTo(Map.of("Chrome", 2L));
      assertThat(values(table, ClickTally.BOT_KIND)).as(table).isEqualTo(Map.of("crawler", 2L));
    }
  }

  @Test
  void theRecountCountsNoClickOfTheDayBeforeItsStart() throws Exception {
    // The earlier run filled the last hour of the day before: R1, R2 and three under (other).
    long dayBefore = DAY_START - LinkPeriods.HOUR;
    var earlier = open(null);
    for (String referrer : List.of(R1, R2, R3, R3, R3)) {
      count(earlier, referred(UUID.randomUUID().toString(), "abc", dayBefore, referrer));
    }
    earlier.processWatermark(DAY_START + LinkPeriods.HOUR);
    write(earlier);
    Map<String, Long> before = values("click_dimensions_hourly", ClickTally.REFERRER);

    // Read again after the rewind's start: one of the R3 clicks, counted already.
    var recount = open(null, Recount.whole(DAY_START, NOW, MINUTE));
    count(recount, referred(UUID.randomUUID().toString(), "abc", dayBefore, R3));
    recount.processWatermark(NOW);
    RollupTurns.throughEveryTurn(recount, EARLY);
    write(recount);

    assertThat(values("click_dimensions_hourly", ClickTally.REFERRER)).isEqualTo(before);
    assertThat(totals("click_hourly")).isEqualTo(List.of(5L, 0L));
  }

  /** The job's counting operator keeping two values, restored from {@code state} when given. */
  private KeyedOneInputStreamOperatorTestHarness<String, MinuteTotals, AggregateRow> open(
      OperatorSubtaskState state) throws Exception {
    return open(state, Recount.NONE);
  }

  /**
   * The job's counting operator keeping two values, restored from {@code state} when given, else
   * started without state with {@code recount}.
   */
  private KeyedOneInputStreamOperatorTestHarness<String, MinuteTotals, AggregateRow> open(
      OperatorSubtaskState state, Recount recount) throws Exception {
    ClickJobOptions options =
        ClickJobOptions.parse(
            "--allowed-lateness",
            "2m",
            "--early-firing-interval",
            EARLY.toSeconds() + "s",
            "--max-dimension-values",
            "2");
    var harness = ClickCountJobGraphs.countHarness(options, recount, 128, 1, 0);
    harnesses.add(harness);
    harness.setProcessingTime(NOW);
    if (state != null) {
      harness.initializeState(state);
    }
    harness.open();
    return harness;
  }

  /** One click per referrer, each in a partial of its own, in the hour's first minute. */
  private static void count(
      KeyedOneInputStreamOperatorTestHarness<String, MinuteTotals, AggregateRow> harness,
      String... referrers)
      throws Exception {
    for (String referrer : referrers) {
      count(harness, referred(UUID.randomUUID().toString(), "abc", at(0), referrer));
    }
  }

  /** One click, in a partial of its own. */
  private static void count(
      KeyedOneInputStreamOperatorTestHarness<String, MinuteTotals, AggregateRow> harness,
      Click click)
      throws Exception {
    long minute = LinkPeriods.minuteOf(click.ts());
    harness.processElement(
        new MinuteTotals(click.code(), minute, new ClickTally().add(click)), click.ts());
  }

  /** Writes the rows the operator sent since the last call, as {@link #write(List)} does. */
  private static void write(
      KeyedOneInputStreamOperatorTestHarness<String, MinuteTotals, AggregateRow> harness)
      throws Exception {
    write(harness.extractOutputValues());
    harness.getOutput().clear();
  }

  /** Writes the rows with the job's writer, as the click job's login, in one batch. */
  private static void write(List<AggregateRow> rows) throws Exception {
    ConnectionOptions connection = new ConnectionOptions();
    new CommandLine(connection)
        .parseArgs(
            "--jdbc-url",
            POSTGRES.jdbcUrl(),
            "--jdbc-user",
            POSTGRES.loginWith("tally_click_job"),
            "--jdbc-password",
            PostgresExtension.LOGIN_PASSWORD);
    WriteAggregates writer =
        new WriteAggregates(
            connection.jdbc(), AggregateTables.READ_SIDE, 10_000, Duration.ofMinutes(10), 0);
    try (var harness = new OneInputStreamOperatorTestHarness<AggregateRow, DeadLetter>(writer)) {
      harness.open();
      for (AggregateRow row : rows) {
        harness.processElement(new StreamRecord<>(row));
      }
      harness.prepareSnapshotPreBarrier(1);
      assertThat(harness.extractOutputValues()).as("dead letters").isEmpty();
    }
  }

  /** The link's clicks and bot clicks in {@code table}, added up over its rows. */
  private static List<Long> totals(String table) {
    return POSTGRES
        .rows("SELECT code, sum(clicks), sum(bot_clicks) FROM " + table + " GROUP BY code")
        .get("abc");
  }

  private static Map<String, Long> values(String table, String dimension) {
    return POSTGRES
        .rows("SELECT value, clicks FROM " + table + " WHERE dimension = '" + dimension + "'")
        .entrySet()
        .stream()
        .collect(Collectors.toMap(Map.Entry::getKey, e -> e.getValue().get(0)));
  }
}
