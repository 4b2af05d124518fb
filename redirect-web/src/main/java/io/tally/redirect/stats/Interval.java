package io.tally.redirect.stats;

import java.time.Duration;
import java.time.Instant;
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
