package io.tally.reconcile;

import java.io.Serializable;
import java.time.Instant;
import java.time.temporal.ChronoUnit;

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
    return new TimeRange(from.truncatedTo(ChronoUnit.MINUTES), to.truncatedTo(ChronoUnit.MINUTES));
  }

  public boolean contains(long epochMillis) {
    return epochMillis >= from.toEpochMilli() && epochMillis < to.toEpochMilli();
  }
}
