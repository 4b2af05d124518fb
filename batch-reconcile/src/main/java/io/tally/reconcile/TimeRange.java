package io.tally.reconcile;

import io.tally.counting.periods.LinkPeriods;
import java.io.Serializable;
import java.time.Instant;

/** A half-open range of whole minutes, {@code [from, to)}. */
public record TimeRange(Instant from, Instant to) implements Serializable {

  public TimeRange {
    if (!from.isBefore(to)) {
      throw new IllegalArgumentException(
          "the range is empty: --from " + from + " is not before --to " + to);
    }
  }

  /**
   * The range with both ends rounded down to the minute: a minute belongs to it when it starts
   * inside it.
   */
  public static TimeRange ofMinutes(Instant from, Instant to) {
    return new TimeRange(startOfMinute(from), startOfMinute(to));
  }

  /** The start of the minute {@code t} falls in, as both jobs cut minutes. */
  static Instant startOfMinute(Instant t) {
    return Instant.ofEpochMilli(LinkPeriods.minuteOf(t.toEpochMilli()));
  }
}
