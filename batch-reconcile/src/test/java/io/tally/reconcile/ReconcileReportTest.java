package io.tally.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * Tests for {@link ReconcileReport#summary()}: what the terminal shows of coverage and refusals.
 */
class ReconcileReportTest {

  private static final Instant FROM = Instant.parse("2026-11-30T08:00:00Z");
  private static final TimeRange RANGE = new TimeRange(FROM, FROM.plus(Duration.ofHours(2)));
  private static final Duration SLACK = Duration.ofMinutes(10);

  @Test
  void aRunOverALogCutShortShowsEachPartitionAndTheMinutesNotCovered() {
    LogCoverage log =
        new LogCoverage(
            "clicks",
            true,
            List.of(
                PartitionCoverage.of(0, 0, 10, FROM.toEpochMilli(), SLACK),
                PartitionCoverage.of(
                    1, 50, 80, FROM.plus(Duration.ofMinutes(20)).toEpochMilli(), SLACK),
                PartitionCoverage.of(2, 70, 70, -1, SLACK)));

    String summary = report(log, Optional.empty(), 240).summary();

    assertThat(summary)
        .startsWith("Reconcile run 7 (repaired)\n")
        .contains("  log coverage      topic 'clicks', 3 partitions:\n")
        .contains("    partition 0     holds every record ever written: all covered\n")
        .contains(
            "    partition 1     starts at offset 50 (2026-11-30T08:20:00Z): covered from"
                + " 2026-11-30T08:30:00Z\n")
        .contains("    partition 2     retention deleted all 70 records: nothing covered\n")
        .contains(
            "    every link      nothing of the range covered: a link's clicks may sit in any"
                + " partition\n")
        .contains("  not covered by the log: 240 minutes, left untouched\n");
  }

  @Test
  void aRunOverALogCutShortShowsWhereEveryLinkIsCoveredFrom() {
    LogCoverage log =
        new LogCoverage(
            "clicks",
            true,
            List.of(
                PartitionCoverage.of(0, 0, 10, FROM.toEpochMilli(), SLACK),
                PartitionCoverage.of(
                    1, 50, 80, FROM.plus(Duration.ofMinutes(20)).toEpochMilli(), SLACK)));

    assertThat(report(log, Optional.empty(), 60).summary())
        .contains(
            "    every link      covered from 2026-11-30T08:30:00Z, the latest partition's"
                + " start\n");
  }

  @Test
  void aRefusedRunSaysWhyAndThatNothingChanged() {
    LogCoverage missing = new LogCoverage("clickz", false, List.of());

    ReconcileReport report = report(missing, Optional.of("topic 'clickz' does not exist"), 0);

    assertThat(report.summary())
        .startsWith("Reconcile run 7 REFUSED (nothing changed)\n")
        .contains("  refused           topic 'clickz' does not exist\n")
        .contains("  log coverage      topic 'clickz' does not exist: nothing covered\n")
        .contains("clicks to change");
    assertThat(report.exitStatus()).isEqualTo(ReconcileReport.EXIT_REFUSED);
    assertThat(report.repaired()).isFalse();
  }

  private static ReconcileReport report(
      LogCoverage log, Optional<String> refusal, long notCovered) {
    return new ReconcileReport(
        7,
        RANGE,
        RANGE.to(),
        false,
        log,
        refusal,
        100,
        90,
        80,
        Collections.emptySortedMap(),
        List.of(),
        50,
        0,
        notCovered,
        Map.of(),
        0,
        0,
        400,
        new EnumMap<>(AggregateTable.class));
  }
}
