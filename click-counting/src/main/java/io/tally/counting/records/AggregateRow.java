package io.tally.counting.records;

/**
 * One row of the read side's aggregate tables, on its way to the one sink that writes them all in
 * one transaction per batch: exactly one of the fields is set.
 *
 * @param minute a row of {@code click_counts}
 * @param hour a row of {@code click_hourly}
 * @param day a row of {@code click_daily}
 * @param dimension a row of {@code click_dimensions_hourly}
 * @param dayDimension a row of {@code click_dimensions_daily}
 * @param hourKept the values an hourly breakdown keeps, whose other rows are cleared
 * @param dayKept the values a daily breakdown keeps, whose other rows are cleared
 */
public record AggregateRow(
    MinuteCount minute,
    PeriodTotals hour,
    PeriodTotals day,
    DimensionCount dimension,
    DimensionCount dayDimension,
    KeptValues hourKept,
    KeptValues dayKept) {

  public static AggregateRow of(MinuteCount minute) {
    return new AggregateRow(minute, null, null, null, null, null, null);
  }

  public static AggregateRow hourOf(PeriodTotals hour) {
    return new AggregateRow(null, hour, null, null, null, null, null);
  }

  public static AggregateRow dayOf(PeriodTotals day) {
    return new AggregateRow(null, null, day, null, null, null, null);
  }

  public static AggregateRow hourOf(DimensionCount dimension) {
    return new AggregateRow(null, null, null, dimension, null, null, null);
  }

  public static AggregateRow dayOf(DimensionCount dimension) {
    return new AggregateRow(null, null, null, null, dimension, null, null);
  }

  public static AggregateRow hourOf(KeptValues kept) {
    return new AggregateRow(null, null, null, null, null, kept, null);
  }

  public static AggregateRow dayOf(KeptValues kept) {
    return new AggregateRow(null, null, null, null, null, null, kept);
  }
}
