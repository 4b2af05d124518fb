package io.tally.redirect.stats;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.event.VisitorSketches;
import java.time.Instant;
import java.time.ZoneId;
import java.util.List;
import java.util.stream.LongStream;
import org.apache.datasketches.cpc.CpcSketch;
import org.junit.jupiter.api.Test;

class VisitorSpanTest {

  private static final Instant NOW = Instant.parse("2026-12-02T12:34:56Z");

  @Test
  void aRangeInsideOneClockHourCountsThatHour() {
    VisitorSpan span = span("2026-11-01T10:05:00Z", "2026-11-01T10:45:00Z", "minute");

    assertThat(span.kind()).isEqualTo(VisitorSpan.Kind.HOUR);
    assertThat(span.from()).isEqualTo(Instant.parse("2026-11-01T10:00:00Z"));
    assertThat(span.to()).isEqualTo(Instant.parse("2026-11-01T11:00:00Z"));
  }

  @Test
  void aRangeOverTwoHoursOfOneDayCountsThatDay() {
    VisitorSpan span = span("2026-11-01T10:59:00Z", "2026-11-01T11:01:00Z", "minute");

    assertThat(span.kind()).isEqualTo(VisitorSpan.Kind.DAY);
    assertThat(span.from()).isEqualTo(Instant.parse("2026-11-01T00:00:00Z"));
    assertThat(span.to()).isEqualTo(Instant.parse("2026-11-02T00:00:00Z"));
  }

  @Test
  void aRangeOverMidnightCountsEveryDayItTouches() {
    VisitorSpan span = span("2026-11-01T23:30:00Z", "2026-11-02T00:30:00Z", "minute");

    assertThat(span.kind()).isEqualTo(VisitorSpan.Kind.DAYS);
    assertThat(span.from()).isEqualTo(Instant.parse("2026-11-01T00:00:00Z"));
    assertThat(span.to()).isEqualTo(Instant.parse("2026-11-03T00:00:00Z"));
  }

  @Test
  void spansFollowTheRangeWidenedToItsBuckets() {
    // Asked for part of one hour, but day buckets widen the range to the whole day.
    assertThat(span("2026-11-01T10:05:00Z", "2026-11-01T10:45:00Z", "day").kind())
        .isEqualTo(VisitorSpan.Kind.DAY);
    StatsRange whole = range("2026-11-01T00:00:00Z", "2026-11-02T00:00:00Z", "day");
    assertThat(VisitorSpan.of(whole).isTheOnlyBucketOf(whole)).isTrue();
    StatsRange named =
        StatsRange.parse(
            "2026-11-01T00:00:00Z",
            "2026-11-02T00:00:00Z",
            "day",
            Instant.parse("2026-12-01T00:00:00Z"),
            ZoneId.of("UTC"));
    assertThat(VisitorSpan.of(named).isTheOnlyBucketOf(named))
        .as("a day of the zone named UTC is the stored day")
        .isTrue();
    assertThat(VisitorSpan.of(whole).widerThan(whole)).isFalse();
    StatsRange hour = range("2026-11-01T10:00:00Z", "2026-11-01T11:00:00Z", "hour");
    assertThat(VisitorSpan.of(hour).isTheOnlyBucketOf(hour)).isTrue();
    StatsRange minutes = range("2026-11-01T10:00:00Z", "2026-11-01T11:00:00Z", "minute");
    assertThat(VisitorSpan.of(minutes).isTheOnlyBucketOf(minutes))
        .as("the hour's visitors are not in a minute series")
        .isFalse();
    assertThat(VisitorSpan.of(minutes).widerThan(minutes)).isFalse();
  }

  @Test
  void anEmptyRangeHasAnEmptySpan() {
    VisitorSpan span = span("2026-11-01T10:00:00Z", "2026-11-01T10:00:00Z", "minute");

    assertThat(span.kind()).isEqualTo(VisitorSpan.Kind.NONE);
    assertThat(span.from()).isEqualTo(span.to());
  }

  @Test
  void daysUnionTheirSketchesAndAddTheDaysWithoutOne() {
    VisitorSpan span = span("2026-11-01T00:00:00Z", "2026-11-04T00:00:00Z", "day");
    // Visitors 0-29 on the first day, 20-49 on the second: 50 people, 60 daily visitors.
    List<StatsStore.DayVisitors> days =
        List.of(
            new StatsStore.DayVisitors(30, sketch(0, 30)),
            new StatsStore.DayVisitors(30, sketch(20, 50)),
            new StatsStore.DayVisitors(7, null),
            new StatsStore.DayVisitors(0, null));

    RangeVisitors visitors = RangeVisitors.ofDays(span, days);

    assertThat(visitors.visitors()).isBetween(56L, 58L);
    assertThat(visitors.exact()).isFalse();
    assertThat(visitors.unsketchedDays()).isEqualTo(1);
  }

  @Test
  void noteSaysWhatTheSpanIsAndWhatDaysWithoutSketchesDo() {
    StatsRange days = range("2026-11-01T00:00:00Z", "2026-11-04T00:00:00Z", "day");
    VisitorSpan daysSpan = VisitorSpan.of(days);
    assertThat(RangeVisitors.ofDays(daysSpan, List.of()).note(days)).isNull();
    assertThat(
            RangeVisitors.ofDays(
                    daysSpan,
                    List.of(
                        new StatsStore.DayVisitors(3, null), new StatsStore.DayVisitors(4, null)))
                .note(days))
        .isEqualTo(
            "2 of the range's days had visitors but no visitor sketch (from before sketches were"
                + " kept, or with visitor keys off for some of the day): each adds its own daily"
                + " visitors, so a person who came on such a day and on another day counts twice.");

    StatsRange hours = range("2026-11-01T10:00:00Z", "2026-11-03T11:00:00Z", "hour");
    assertThat(RangeVisitors.ofDays(VisitorSpan.of(hours), List.of()).note(hours))
        .isEqualTo(
            "Unique visitors are counted over whole UTC days: 2026-11-01T00:00:00Z to"
                + " 2026-11-04T00:00:00Z.");

    StatsRange minutes = range("2026-11-01T10:05:00Z", "2026-11-01T10:45:00Z", "minute");
    assertThat(RangeVisitors.exact(VisitorSpan.of(minutes), 4).note(minutes))
        .isEqualTo(
            "Unique visitors are counted over the whole clock hour: 2026-11-01T10:00:00Z to"
                + " 2026-11-01T11:00:00Z.");
  }

  private static VisitorSpan span(String from, String to, String interval) {
    return VisitorSpan.of(range(from, to, interval));
  }

  private static StatsRange range(String from, String to, String interval) {
    return StatsRange.parse(from, to, interval, NOW);
  }

  private static byte[] sketch(long fromKey, long toKey) {
    CpcSketch sketch = VisitorSketches.newSketch();
    LongStream.range(fromKey, toKey).forEach(sketch::update);
    return VisitorSketches.toBytes(sketch);
  }
}
