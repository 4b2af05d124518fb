package io.tally.counting.records;

/**
 * One row of the read side's aggregate tables, on its way to the one sink that writes them all in
 * one transaction per batch: exactly one of the fields is set, or none in {@link #END_OF_ROUND}.
 *
 * @param minute a row of {@code click_counts}
 * @param hour a row of {@code click_hourly}
 * @param day a row of {@code click_daily}
 * @param dimension a row of {@code click_dimensions_hourly}
 * @param dayDimension a row of {@code click_dimensions_daily}
 * @param hourKept the values an hourly breakdown keeps, whose other rows are cleared
 * @param dayKept the values a daily breakdown keeps, whose other rows are cleared
 * @param replaces whether the minute, hour or day row replaces the stored one, lower or not: its
 *     period was recounted whole ({@link io.tally.counting.periods.Recount})
 */
public record AggregateRow(
    MinuteCount minute,
    PeriodTotals hour,
    PeriodTotals day,
    DimensionCount dimension,
    DimensionCount dayDimension,
    KeptValues hourKept,
    KeptValues dayKept,
    boolean replaces) {

  /**
   * No row: the end of one round of the counting's writes (a tick, a watermark's closing), after
   * which the writer sends what it holds at once instead of when its flush interval ends, so that a
   * live minute's row waits for no timer.
   */
  public static final AggregateRow END_OF_ROUND =
      new AggregateRow(null, null, null, null, null, null, null, false);

  /** Whether this is {@link #END_OF_ROUND}. */
  public boolean endsRound() {
    return minute == null
        && hour == null
        && day == null
        && dimension == null
        && dayDimension == null
        && hourKept == null
        && dayKept == null;
  }

  public static AggregateRow of(MinuteCount minute) {
    return new AggregateRow(minute, null, null, null, null, null, null, false);
  }

  public static AggregateRow hourOf(PeriodTotals hour) {
    return new AggregateRow(null, hour, null, null, null, null, null, false);
  }

  public static AggregateRow dayOf(PeriodTotals day) {
    return new AggregateRow(null, null, day, null, null, null, null, false);
  }

  public static AggregateRow hourOf(DimensionCount dimension) {
    return new AggregateRow(null, null, null, dimension, null, null, null, false);
  }

  public static AggregateRow dayOf(DimensionCount dimension) {
    return new AggregateRow(null, null, null, null, dimension, null, null, false);
  }

  public static AggregateRow hourOf(KeptValues kept) {
    return new AggregateRow(null, null, null, null, null, kept, null, false);
  }

  public static AggregateRow dayOf(KeptValues kept) {
    return new AggregateRow(null, null, null, null, null, null, kept, false);
  }

  /** A minute's row that replaces the stored one ({@link #replaces}). */
  public static AggregateRow replacing(MinuteCount minute) {
    return new AggregateRow(minute, null, null, null, null, null, null, true);
  }

  /** An hour's row that replaces the stored one ({@link #replaces}). */
  public static AggregateRow replacingHour(PeriodTotals hour) {
    return new AggregateRow(null, hour, null, null, null, null, null, true);
  }

  /** A day's row that replaces the stored one ({@link #replaces}). */
  public static AggregateRow replacingDay(PeriodTotals day) {
    return new AggregateRow(null, null, day, null, null, null, null, true);
  }
}
