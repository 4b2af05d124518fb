package io.tally.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Tests for {@link PartitionCoverage} and {@link LogCoverage}: which part of a range each
 * partition, and the log, covers.
 */
class LogCoverageTest {

  private static final Duration SLACK = Duration.ofMinutes(10);
  private static final Instant FROM = Instant.parse("2026-11-30T10:00:00Z");
  private static final TimeRange RANGE = new TimeRange(FROM, FROM.plus(Duration.ofHours(2)));

  @Test
  void aPartitionThatNeverLostARecordCoversEverythingWhenItsFirstRecordIsLate() {
    PartitionCoverage p =
        PartitionCoverage.of(0, 0, 500, FROM.plus(Duration.ofMinutes(30)).toEpochMilli(), SLACK);

    assertThat(p.complete()).isTrue();
    assertThat(p.coveredFrom(RANGE)).isEqualTo(FROM);
  }

  @Test
  void anEmptyPartitionThatNeverLostARecordCoversEverything() {
    PartitionCoverage p = PartitionCoverage.of(0, 0, 0, -1, SLACK);

    assertThat(p.coveredFrom(RANGE)).isEqualTo(FROM);
  }

  @Test
  void aPartitionRetentionEmptiedCoversNothing() {
    PartitionCoverage p = PartitionCoverage.of(1, 900, 900, -1, SLACK);

    assertThat(p.emptied()).isTrue();
    assertThat(p.coveredFrom(RANGE)).isEqualTo(RANGE.to());
  }

  @Test
  void aCutPartitionCoversFromItsEarliestRecordPlusTheSlackRoundedUpToAMinute() {
    Instant earliest = FROM.plus(Duration.ofMinutes(20)).plusSeconds(17);
    PartitionCoverage p = PartitionCoverage.of(2, 900, 1000, earliest.toEpochMilli(), SLACK);

    assertThat(p.coveredFrom(RANGE)).isEqualTo(FROM.plus(Duration.ofMinutes(31)));
  }

  @Test
  void aCutPartitionWhoseEarliestRecordOnAMinuteBoundaryStaysOnIt() {
    PartitionCoverage p = PartitionCoverage.of(2, 900, 1000, FROM.toEpochMilli(), SLACK);

    assertThat(p.coveredFrom(RANGE)).isEqualTo(FROM.plus(SLACK));
  }

  @Test
  void aCutPartitionWhoseEarliestRecordIsWellBeforeTheRangeCoversItWhole() {
    PartitionCoverage p =
        PartitionCoverage.of(2, 900, 1000, FROM.minus(Duration.ofDays(3)).toEpochMilli(), SLACK);

    assertThat(p.coveredFrom(RANGE)).isEqualTo(FROM);
  }

  @Test
  void aCutPartitionWhoseEarliestRecordIsWithinTheSlackBeforeTheRangeDoesNotCoverItsStart() {
    PartitionCoverage p =
        PartitionCoverage.of(2, 900, 1000, FROM.minus(Duration.ofMinutes(4)).toEpochMilli(), SLACK);

    assertThat(p.coveredFrom(RANGE)).isEqualTo(FROM.plus(Duration.ofMinutes(6)));
  }

  @Test
  void aCutPartitionWhoseEarliestRecordIsAfterTheRangeCoversNoneOfIt() {
    PartitionCoverage p =
        PartitionCoverage.of(
            2, 900, 1000, RANGE.to().plus(Duration.ofHours(1)).toEpochMilli(), SLACK);

    assertThat(p.coveredFrom(RANGE)).isEqualTo(RANGE.to());
  }

  @Test
  void everyLinkIsCoveredFromTheLatestStartOfAnyPartition() {
    Instant cut = FROM.plus(Duration.ofMinutes(45));
    LogCoverage log =
        new LogCoverage(
            "clicks",
            true,
            List.of(
                PartitionCoverage.of(0, 0, 10, FROM.toEpochMilli(), SLACK),
                PartitionCoverage.of(1, 50, 80, cut.minus(SLACK).toEpochMilli(), SLACK),
                PartitionCoverage.of(
                    2, 20, 90, FROM.plus(Duration.ofMinutes(5)).toEpochMilli(), SLACK)));

    assertThat(log.coveredFrom(RANGE)).isEqualTo(cut);
    assertThat(log.coversAll(RANGE)).isFalse();
  }

  @Test
  void aPartitionRetentionEmptiedLeavesNothingCovered() {
    LogCoverage log =
        new LogCoverage(
            "clicks",
            true,
            List.of(
                PartitionCoverage.of(0, 0, 10, FROM.toEpochMilli(), SLACK),
                PartitionCoverage.of(1, 50, 50, -1, SLACK)));

    assertThat(log.coveredFrom(RANGE)).isEqualTo(RANGE.to());
  }

  @Test
  void aMissingTopicCoversNothing() {
    LogCoverage log = new LogCoverage("clickz", false, List.of());

    assertThat(log.coveredFrom(RANGE)).isEqualTo(RANGE.to());
    assertThat(log.coversAll(RANGE)).isFalse();
  }

  @Test
  void aLogWhosePartitionsAllCoverTheRangeCoversAll() {
    LogCoverage log =
        new LogCoverage(
            "clicks",
            true,
            List.of(
                PartitionCoverage.of(0, 0, 10, FROM.toEpochMilli(), SLACK),
                PartitionCoverage.of(
                    1, 50, 80, FROM.minus(Duration.ofDays(1)).toEpochMilli(), SLACK)));

    assertThat(log.coversAll(RANGE)).isTrue();
    assertThat(log.coveredFrom(RANGE)).isEqualTo(FROM);
    assertThat(log.json(RANGE))
        .isEqualTo(
            "{\"topic\":\"clicks\",\"exists\":true,\"covered_from\":\"2026-11-30T10:00:00Z\",\"partitions\":["
                + "{\"partition\":0,\"log_start_offset\":0,\"end_offset\":10,\"earliest_timestamp\":\"2026-11-30T10:00:00Z\",\"covered_from\":\"all\"},"
                + "{\"partition\":1,\"log_start_offset\":50,\"end_offset\":80,\"earliest_timestamp\":\"2026-11-29T10:00:00Z\","
                + "\"covered_from\":\"2026-11-29T10:10:00Z\"}]}");
  }
}
