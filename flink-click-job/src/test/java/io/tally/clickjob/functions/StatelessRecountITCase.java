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
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import picocli.CommandLine;

/**
 * A job started without state recounts the open day that its earlier run wrote (the upgrade path of
 * the runbook). Partials come in another order the second time, so a full breakdown may keep other
 * values than before: written to a real PostgreSQL as the job's own login, the breakdown must still
 * hold exactly the recount's values and add up to its clicks, not keep the earlier run's values
 * beside the new ones.
 */
class StatelessRecountITCase {

  @RegisterExtension static final PostgresExtension POSTGRES = new PostgresExtension();

  private static final long HOUR_START = LinkPeriods.hourOf(at(0));
  private static final long NOW = at(10 * MINUTE);

  @BeforeEach
  void setUp() {
    POSTGRES.truncateAll();
  }

  @Test
  void aFullBreakdownRecountedInAnotherOrderHoldsTheRecountsValuesAndAddsUpToItsClicks()
      throws Exception {
    // The earlier run, stopped while the hour was open: keeps a and b, counts c under (other).
    write(count(false, "a.example", "b.example", "c.example", "c.example", "c.example"));
    assertThat(referrers("click_dimensions_hourly"))
        .isEqualTo(Map.of("a.example", 1L, "b.example", 1L, DimensionCount.OTHER, 3L));

    // Started without state: the recount meets c first, and d came after the stop. Its (other)
    // is smaller than the earlier run's.
    write(
        count(true, "c.example", "c.example", "c.example", "d.example", "a.example", "b.example"));

    Map<String, Long> expected = Map.of("c.example", 3L, "d.example", 1L, DimensionCount.OTHER, 2L);
    assertThat(referrers("click_dimensions_hourly")).isEqualTo(expected);
    assertThat(referrers("click_dimensions_daily")).isEqualTo(expected);
    assertThat(POSTGRES.rows("SELECT code, clicks FROM click_hourly"))
        .isEqualTo(Map.of("abc", List.of(6L)));
  }

  /**
   * Counts one click per referrer, each in a partial of its own, in a fresh operator keeping two
   * values; writes the open hour and day on the backlog flush, or closes them with {@code close}.
   */
  private static List<AggregateRow> count(boolean close, String... referrers) throws Exception {
    ClickJobOptions options =
        ClickJobOptions.parse(
            "--allowed-lateness",
            "2m",
            "--early-firing-interval",
            "2s",
            "--max-dimension-values",
            "2");
    try (var harness = ClickCountJobGraphs.countHarness(options, 128, 1, 0)) {
      harness.setProcessingTime(NOW);
      harness.open();
      for (int i = 0; i < referrers.length; i++) {
        ClickTally tally = new ClickTally().add(referred("c" + i, "abc", at(0), referrers[i]));
        harness.processElement(new MinuteTotals("abc", at(0), tally), at(0));
      }
      if (close) {
        harness.processWatermark(HOUR_START + LinkPeriods.DAY);
      } else {
        harness.setProcessingTime(NOW + LiveOrBacklog.BACKLOG_FLUSH_MILLIS);
      }
      return harness.extractOutputValues();
    }
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
