package io.tally.reconcile;

import io.tally.counting.periods.LinkPeriods;
import java.time.Duration;
import java.time.Instant;

/**
 * What one partition of the click topic still holds, and from when on it holds every click written
 * to it ({@link LogCoverage} takes the latest of these over all partitions).
 *
 * <p>{@code coveredFrom} is {@link Instant#MIN} when the partition holds every record ever written
 * to it (its log start offset is 0, whether it has records or not: an empty partition that never
 * lost a record lacks no click), {@link Instant#MAX} when retention deleted every record it had
 * (log start offset above 0, no record left), and otherwise the earliest retained record's
 * timestamp plus the read slack, rounded up to a whole minute. The slack is there because records
 * are stored by arrival, a little out of event-time order: a deleted record just before the
 * earliest retained one may carry a time up to that much later, the same allowance the read itself
 * makes.
 *
 * @param partition the partition number
 * @param logStartOffset the earliest offset retention has left
 * @param endOffset the offset the next record will get
 * @param earliestTimestamp the timestamp of the earliest retained record, epoch millis; -1 when
 *     there is none
 * @param coveredFrom the first instant whose minutes the partition holds whole (see above)
 */
public record PartitionCoverage(
    int partition,
    long logStartOffset,
    long endOffset,
    long earliestTimestamp,
    Instant coveredFrom) {

  /** Works out {@code coveredFrom} from what the broker reports about the partition. */
  public static PartitionCoverage of(
      int partition, long logStartOffset, long endOffset, long earliestTimestamp, Duration slack) {
    Instant coveredFrom;
    if (logStartOffset == 0) {
      coveredFrom = Instant.MIN;
    } else if (endOffset <= logStartOffset || earliestTimestamp < 0) {
      coveredFrom = Instant.MAX;
    } else {
      coveredFrom = ceilToMinute(Instant.ofEpochMilli(earliestTimestamp).plus(slack));
    }
    return new PartitionCoverage(
        partition, logStartOffset, endOffset, earliestTimestamp, coveredFrom);
  }

  /** Whether the partition holds every record ever written to it. */
  public boolean complete() {
    return coveredFrom.equals(Instant.MIN);
  }

  /** Whether retention left nothing of the partition. */
  public boolean emptied() {
    return coveredFrom.equals(Instant.MAX);
  }

  /**
   * The part of {@code range} this partition covers starts here; {@code range.to()} when it covers
   * none.
   */
  public Instant coveredFrom(TimeRange range) {
    if (coveredFrom.isBefore(range.from())) {
      return range.from();
    }
    return coveredFrom.isAfter(range.to()) ? range.to() : coveredFrom;
  }

  /** How the report shows it. */
  String describe() {
    if (complete()) {
      return endOffset == 0
          ? "empty, never lost a record: all covered"
          : "holds every record ever written: all covered";
    }
    if (emptied()) {
      return "retention deleted all " + logStartOffset + " records: nothing covered";
    }
    return "starts at offset "
        + logStartOffset
        + " ("
        + Instant.ofEpochMilli(earliestTimestamp)
        + "): covered from "
        + coveredFrom;
  }

  /** The partition as JSON for {@code reconcile_runs.coverage}. */
  String json() {
    return String.format(
        "{\"partition\":%d,\"log_start_offset\":%d,\"end_offset\":%d,\"earliest_timestamp\":%s,\"covered_from\":%s}",
        partition,
        logStartOffset,
        endOffset,
        earliestTimestamp < 0 ? "null" : "\"" + Instant.ofEpochMilli(earliestTimestamp) + "\"",
        complete() ? "\"all\"" : emptied() ? "\"none\"" : "\"" + coveredFrom + "\"");
  }

  private static Instant ceilToMinute(Instant t) {
    Instant floor = TimeRange.startOfMinute(t);
    return floor.equals(t) ? t : floor.plusMillis(LinkPeriods.MINUTE);
  }
}
