package io.tally.counting.records;

/**
 * Where a link's period rows go ({@link io.tally.counting.periods.LinkPeriods#writeChanges}): one
 * method per table.
 */
public interface PeriodRows {

  /** A row of {@code click_counts}. */
  void minute(MinuteCount row);

  /**
   * A row of {@code click_counts} for a minute recounted whole, to replace the stored one whether
   * lower or not ({@link io.tally.counting.periods.Recount}).
   */
  void recountedMinute(MinuteCount row);

  /** A row of {@code click_hourly}. */
  void hour(PeriodTotals row);

  /** A row of {@code click_hourly} for an hour recounted whole, as {@link #recountedMinute}. */
  void recountedHour(PeriodTotals row);

  /** A row of {@code click_daily}. */
  void day(PeriodTotals row);

  /** A row of {@code click_daily} for a day recounted whole, as {@link #recountedMinute}. */
  void recountedDay(PeriodTotals row);

  /** A row of {@code click_dimensions_hourly}. */
  void dimension(DimensionCount row);

  /**
   * A row of {@code click_dimensions_daily}: {@link DimensionCount#periodStart()} is the day's
   * start.
   */
  void dayDimension(DimensionCount row);

  /**
   * The values an hourly breakdown keeps, sent before its rows when asked for ({@link
   * io.tally.counting.periods.LinkPeriods#writeChanges}).
   */
  void keptInHour(KeptValues kept);

  /** The values a daily breakdown keeps, as {@link #keptInHour}. */
  void keptInDay(KeptValues kept);
}
