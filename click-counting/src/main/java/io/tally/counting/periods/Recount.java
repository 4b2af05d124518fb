package io.tally.counting.periods;

import java.io.Serializable;

/**
 * What a run of the click job that started without state recounts of the periods an earlier run
 * wrote, and so how it may write them. The job's source rewinds to recount them (ADR-006): far
 * enough that every click of a period starting at or after {@code from} is read again, when the
 * topic still holds them ({@link #whole}); or, when it cannot tell where to rewind to, only from
 * where the earlier run left off ({@link #partial}).
 *
 * <ul>
 *   <li>A period recounted whole replaces the earlier run's rows, lower or not, so that a release
 *       that classifies some clicks differently (a person now a crawler, a browser renamed) leaves
 *       the rows it would have written from the start. Its rows are held back until it is whole:
 *       until it closes, or until the run has caught up, its watermark at {@code caughtUpAt} (every
 *       partition read past the run's start), when every click the earlier run could have read has
 *       been read again.
 *   <li>A period before {@code from} is not counted at all: its clicks are those the earlier run
 *       counted, or would have found too late by then, and a recount of some of them could only
 *       replace its rows with less.
 *   <li>A period recounted in part is written as any other, never lowering a row, but never clears
 *       a breakdown either: values it keeps may be fewer than the earlier run's, and clearing would
 *       drop theirs. Reconciliation makes it exact.
 * </ul>
 *
 * Periods starting at or after {@code before} no earlier run can have written: they are written as
 * in any run. A run restored from a checkpoint or savepoint keeps the recount it started with.
 *
 * @param from periods starting before it are not counted; {@link Long#MIN_VALUE} counts all
 * @param before periods starting before it may hold an earlier run's rows: {@code caughtUpAt} plus
 *     the most a click's own time may be ahead of its record's
 * @param whole whether periods in {@code [from, before)} are recounted whole
 * @param caughtUpAt the event time by which every click the earlier run may have read was read
 *     again
 */
public record Recount(long from, long before, boolean whole, long caughtUpAt)
    implements Serializable {

  /** Nothing recounted: the group's first run. */
  public static final Recount NONE =
      new Recount(Long.MIN_VALUE, Long.MIN_VALUE, false, Long.MIN_VALUE);

  /**
   * A run that rewound to read every click of the periods starting at or after {@code from}, and
   * has read every click an earlier run may have read once its watermark reaches {@code
   * caughtUpAt}; {@code futureSkew} is the most a click's time may be ahead of its record's.
   */
  public static Recount whole(long from, long caughtUpAt, long futureSkew) {
    return new Recount(from, caughtUpAt + futureSkew, true, caughtUpAt);
  }

  /** A run started at {@code startedAt} that could not rewind to recount whole periods. */
  public static Recount partial(long startedAt, long futureSkew) {
    return new Recount(Long.MIN_VALUE, startedAt + futureSkew, false, Long.MIN_VALUE);
  }

  /** Whether the clicks of the minute starting at {@code minuteStart} are counted. */
  public boolean counts(long minuteStart) {
    return minuteStart >= from;
  }

  /** Whether the period starting at {@code start} is recounted whole, replacing what it held. */
  public boolean recountsWhole(long start) {
    return whole && start >= from && start < before;
  }

  /** Whether the period starting at {@code start} is recounted from only some of its clicks. */
  public boolean recountsPart(long start) {
    return !whole && start < before;
  }

  /**
   * Periods ending at or before this are whole at {@code watermark}: every one once the run has
   * caught up, else those it has closed.
   */
  public long wholeBy(long watermark, long closedBy) {
    return watermark >= caughtUpAt ? Long.MAX_VALUE : closedBy;
  }
}
