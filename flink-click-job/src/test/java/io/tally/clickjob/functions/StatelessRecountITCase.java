package io.tally.clickjob.functions;

import static io.tally.counting.Clicks.MINUTE;
import static io.tally.counting.Clicks.at;
import static io.tally.counting.Clicks.referred;
import static org.assertj.core.api.Assertions.assertThat;

import io.tally.clickjob.ClickCountJobGraphs;
import io.tally.clickjob.ClickJobOptions;
import io.tally.counting.ConnectionOptions;
import io.tally.counting.periods.ClickTally;
import io.tally.counting.periods.LinkPeriods;
import io.tally.counting.periods.MinuteTotals;
import io.tally.counting.records.AggregateRow;
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
  private static final long NOW = at(10 * MINUTE);

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
    earlier.setProcessingTime(NOW + LiveOrBacklog.BACKLOG_FLUSH_MILLIS);
    write(earlier);
    assertThat(referrers("click_dimensions_hourly"))
        .isEqualTo(Map.of(R1, 1L, R2, 1L, DimensionCount.OTHER, 3L));

    // Started without state: the recount meets R3 first, and R0 came after the stop. Its (other)
    // is larger than the earlier run's, R2's row must go.
    var recount = open(null);
    count(recount, R3, R3, R3, R0, R1, R2);
    recount.processWatermark(HOUR_START + LinkPeriods.DAY);
    write(recount);

    Map<String, Long> expected = Map.of(R0, 1L, R1, 1L, DimensionCount.OTHER, 4L);
    assertThat(referrers("click_dimensions_hourly")).isEqualTo(expected);
    assertThat(referrers("click_dimensions_daily")).isEqualTo(expected);
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
    first.setProcessingTime(NOW + LiveOrBacklog.BACKLOG_FLUSH_MILLIS);
    write(first);
    assertThat(referrers("click_dimensions_hourly"))
        .as("before the kill")
        .isEqualTo(Map.of(R1, 1L, R2, 1L, DimensionCount.OTHER, 3L));

    // Restored, the replay meets what came after the checkpoint in another order, and more.
    var replay = open(checkpoint);
    count(replay, R3, R0, R1);
    replay.processWatermark(HOUR_START + LinkPeriods.DAY);
    write(replay);

    Map<String, Long> expected = Map.of(R0, 1L, R1, 1L, DimensionCount.OTHER, 4L);
    assertThat(referrers("click_dimensions_hourly")).isEqualTo(expected);
    assertThat(referrers("click_dimensions_daily")).isEqualTo(expected);
    assertThat(POSTGRES.rows("SELECT code, clicks FROM click_hourly"))
        .isEqualTo(Map.of("abc", List.of(6L)));
  }

  /** The job's counting operator keeping two values, restored from {@code state} when given. */
  private KeyedOneInputStreamOperatorTestHarness<String, MinuteTotals, AggregateRow> open(
      OperatorSubtaskState state) throws Exception {
    ClickJobOptions options =
        ClickJobOptions.parse(
            "--allowed-lateness",
            "2m",
            "--early-firing-interval",
            "2s",
            "--max-dimension-values",
            "2");
    var harness = ClickCountJobGraphs.countHarness(options, 128, 1, 0);
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
      ClickTally tally =
          new ClickTally().add(referred(UUID.randomUUID().toString(), "abc", at(0), referrer));
      harness.processElement(new MinuteTotals("abc", at(0), tally), at(0));
    }
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

  private static Map<String, Long> referrers(String table) {
    return POSTGRES
        .rows("SELECT value, clicks FROM " + table + " WHERE dimension = 'referrer'")
        .entrySet()
        .stream()
        .collect(Collectors.toMap(Map.Entry::getKey, e -> e.getValue().get(0)));
  }
}
