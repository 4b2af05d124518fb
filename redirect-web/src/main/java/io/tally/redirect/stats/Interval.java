package io.tally.redirect.stats;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.temporal.ChronoUnit;
import java.util.Locale;

/** A bucket size of the stats API, each read from its own table. */
public enum Interval {
  MINUTE(Duration.ofMinutes(1)),
  HOUR(Duration.ofHours(1)),
  DAY(Duration.ofDays(1));

  private final Duration step;

  Interval(Duration step) {
    this.step = step;
  }

  public Duration step() {
    return step;
  }

  public String label() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** The start of the bucket holding {@code t}; days are UTC days. */
  public Instant floor(Instant t) {
    long millis = step.toMillis();
    return Instant.ofEpochMilli(Math.floorDiv(t.toEpochMilli(), millis) * millis);
  }

  /** The first bucket boundary at or after {@code t}. */
  public Instant ceil(Instant t) {
    Instant floor = floor(t);
    return floor.equals(t) ? t : floor.plus(step);
  }

  /**
   * The start of the bucket holding {@code t} in {@code zone}: its local hour or local day (a day
   * of 23 or 25 hours when the clocks change). Minutes are the same in every zone of whole-minute
   * offsets.
   */
  public Instant floor(Instant t, ZoneId zone) {
    return switch (this) {
      case MINUTE -> floor(t);
      case HOUR -> t.atZone(zone).truncatedTo(ChronoUnit.HOURS).toInstant();
      case DAY -> t.atZone(zone).toLocalDate().atStartOfDay(zone).toInstant();
    };
  }

  /** The first bucket boundary in {@code zone} at or after {@code t}. */
  public Instant ceil(Instant t, ZoneId zone) {
    Instant floor = floor(t, zone);
    return floor.equals(t) ? t : next(floor, zone);
  }

  /** The start of the bucket after the one starting at {@code bucket}, in {@code zone}. */
  public Instant next(Instant bucket, ZoneId zone) {
    return this == DAY
        ? bucket.atZone(zone).toLocalDate().plusDays(1).atStartOfDay(zone).toInstant()
        : bucket.plus(step);
  }

  /** The start of the bucket {@code n} buckets before the one starting at {@code bucket}. */
  public Instant minus(Instant bucket, long n, ZoneId zone) {
    return this == DAY
        ? bucket.atZone(zone).toLocalDate().minusDays(n).atStartOfDay(zone).toInstant()
        : bucket.minus(step.multipliedBy(n));
  }

  /**
   * The interval a chart of {@code span} reads when none is asked for: at most a few hundred
   * points.
   */
  public static Interval forSpan(Duration span) {
    if (span.compareTo(Duration.ofHours(3)) <= 0) {
      return MINUTE;
    }
    return span.compareTo(Duration.ofDays(14)) <= 0 ? HOUR : DAY;
  }

  public static Interval parse(String text) {
    for (Interval i : values()) {
      if (i.label().equals(text)) {
        return i;
      }
    }
    return null;
  }
}
