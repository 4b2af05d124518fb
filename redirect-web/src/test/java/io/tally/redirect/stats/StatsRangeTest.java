package io.tally.redirect.stats;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.time.ZoneId;
import org.junit.jupiter.api.Test;

/** Tests for {@link StatsRange}'s buckets in a time zone. */
class StatsRangeTest {

  private static final ZoneId NEW_YORK = ZoneId.of("America/New_York");
  private static final ZoneId KOLKATA = ZoneId.of("Asia/Kolkata");
  private static final Instant NOW = Instant.parse("2026-12-05T00:00:00Z");

  @Test
  void localDaysAreWidenedToLocalMidnightsAndCanLast23Or25Hours() {
    StatsRange range =
        StatsRange.parse("2026-11-01T12:00:00Z", "2026-11-02T06:00:00Z", "day", NOW, NEW_YORK);

    assertThat(range.from()).isEqualTo(Instant.parse("2026-11-01T04:00:00Z"));
    assertThat(range.to()).isEqualTo(Instant.parse("2026-11-03T05:00:00Z"));
    assertThat(range.buckets())
        .containsExactly(
            Instant.parse("2026-11-01T04:00:00Z"), Instant.parse("2026-11-02T05:00:00Z"));
    assertThat(range.previous().buckets())
        .containsExactly(
            Instant.parse("2026-10-30T04:00:00Z"), Instant.parse("2026-10-31T04:00:00Z"));
  }

  @Test
  void aZoneIsInWholeHoursUnlessAnOffsetOfItIsNot() {
    StatsRange newYork =
        StatsRange.parse("2026-10-25T00:00:00Z", "2026-11-08T00:00:00Z", "day", NOW, NEW_YORK);
    StatsRange kolkata =
        StatsRange.parse("2026-11-01T00:00:00Z", "2026-11-02T00:00:00Z", "hour", NOW, KOLKATA);

    assertThat(newYork.inWholeHours()).isTrue();
    assertThat(newYork.isUtc()).isFalse();
    assertThat(kolkata.inWholeHours()).isFalse();
    assertThat(kolkata.from())
        .as("a local hour starts at half past")
        .isEqualTo(Instant.parse("2026-10-31T23:30:00Z"));
    assertThat(StatsStore.sourceOf(kolkata)).isEqualTo(Interval.MINUTE);
    assertThat(StatsStore.sourceOf(newYork)).isEqualTo(Interval.HOUR);
    assertThat(StatsStore.sourceOf(StatsRange.parse("7d", "now", "day", NOW, ZoneId.of("UTC"))))
        .isEqualTo(Interval.DAY);
  }
}
