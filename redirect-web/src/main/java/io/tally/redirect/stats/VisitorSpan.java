package io.tally.redirect.stats;

import java.time.Instant;

/**
 * The period a range's unique visitors are counted over. Exact visitors exist only per clock hour
 * and per UTC day, and sketches only per UTC day, so a range's visitors are those of the smallest
 * such period that holds it: its clock hour, its UTC day, or every UTC day it touches.
 *
 * @param from the span's start
 * @param to the span's end (exclusive)
 * @param kind which of the stored periods the span is
 */
public record VisitorSpan(Instant from, Instant to, Kind kind) {

  /** The stored periods a span can be. */
  public enum Kind {
    /** An empty range: no period, no visitors. */
    NONE,
    /** One clock hour, whose exact visitors are a {@code click_hourly} row's. */
    HOUR,
    /** One UTC day, whose exact visitors are a {@code click_daily} row's. */
    DAY,
    /** Several UTC days, whose visitors are estimated from their sketches. */
    DAYS
  }

  /** The span of a range already widened to whole buckets. */
  public static VisitorSpan of(StatsRange range) {
    Instant from = range.from();
    Instant to = range.to();
    if (!from.isBefore(to)) {
      return new VisitorSpan(from, to, Kind.NONE);
    }
    Instant hour = Interval.HOUR.floor(from);
    Instant hourEnd = hour.plus(Interval.HOUR.step());
    if (!to.isAfter(hourEnd)) {
      return new VisitorSpan(hour, hourEnd, Kind.HOUR);
    }
    Instant day = Interval.DAY.floor(from);
    Instant dayEnd = day.plus(Interval.DAY.step());
    if (!to.isAfter(dayEnd)) {
      return new VisitorSpan(day, dayEnd, Kind.DAY);
    }
    return new VisitorSpan(day, Interval.DAY.ceil(to), Kind.DAYS);
  }

  /** Whether the span counts visitors over more time than {@code range} covers. */
  public boolean widerThan(StatsRange range) {
    return from.isBefore(range.from()) || to.isAfter(range.to());
  }

  /**
   * A span of one hour or one day as a range of its one bucket, whose series point holds its exact
   * visitors.
   *
   * @throws IllegalStateException for a span of several days, or none
   */
  public StatsRange bucket() {
    return switch (kind) {
      case HOUR -> new StatsRange(from, to, Interval.HOUR);
      case DAY -> new StatsRange(from, to, Interval.DAY);
      default -> throw new IllegalStateException("a span of " + kind + " is not one bucket");
    };
  }

  /** Whether the span is exactly the range's single bucket, whose visitors the series holds. */
  public boolean isTheOnlyBucketOf(StatsRange range) {
    if (kind != Kind.HOUR && kind != Kind.DAY) {
      return false;
    }
    StatsRange bucket = bucket();
    return bucket.from().equals(range.from())
        && bucket.to().equals(range.to())
        && bucket.interval() == range.interval()
        && range.isUtc();
  }
}
