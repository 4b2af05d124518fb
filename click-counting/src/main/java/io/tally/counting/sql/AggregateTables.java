package io.tally.counting.sql;

import io.tally.counting.records.DimensionCount;
import io.tally.counting.records.KeptValues;
import io.tally.counting.records.MinuteCount;
import io.tally.counting.records.PeriodTotals;
import java.io.Serializable;

/**
 * The five tables that {@link WriteAggregates} writes the rows of {@link
 * io.tally.counting.records.AggregateRow} into: the read side's own ({@link #READ_SIDE}), or
 * reconciliation's staging tables. Those that only the streaming job needs are null in the staging
 * tables: clearing breakdowns, replacing recounted rows and a day's totals without its sketch. A
 * breakdown's refused value stands in as {@link DimensionCount#standIn()}; a refused row of the
 * others is set aside.
 */
public record AggregateTables(
    UpsertTable<MinuteCount> minutes,
    UpsertTable<PeriodTotals> hours,
    UpsertTable<PeriodTotals> days,
    UpsertTable<DimensionCount> dimensions,
    UpsertTable<DimensionCount> dayDimensions,
    UpsertTable<KeptValues> hourKept,
    UpsertTable<KeptValues> dayKept,
    UpsertTable<MinuteCount> replacingMinutes,
    UpsertTable<PeriodTotals> replacingHours,
    UpsertTable<PeriodTotals> replacingDays,
    UpsertTable<PeriodTotals> dayTotals)
    implements Serializable {

  /**
   * Tables whose breakdowns are never cleared and whose rows are never replaced: no earlier run
   * wrote them.
   */
  public AggregateTables(
      UpsertTable<MinuteCount> minutes,
      UpsertTable<PeriodTotals> hours,
      UpsertTable<PeriodTotals> days,
      UpsertTable<DimensionCount> dimensions,
      UpsertTable<DimensionCount> dayDimensions) {
    this(minutes, hours, days, dimensions, dayDimensions, null, null, null, null, null, null);
  }

  /** The read side's tables, by the upserts that never lower a row. */
  public static final AggregateTables READ_SIDE =
      new AggregateTables(
          new UpsertTable<>(
              "click_counts", ClickCountUpsert.SQL, new ClickCountUpsert(), MinuteCount::key, null),
          new UpsertTable<>(
              "click_hourly",
              AggregateUpserts.HOURS_SQL,
              AggregateUpserts.HOURS,
              PeriodTotals::key,
              null),
          new UpsertTable<>(
              "click_daily",
              AggregateUpserts.DAYS_SQL,
              AggregateUpserts.DAYS,
              PeriodTotals::key,
              null),
          new UpsertTable<>(
              "click_dimensions_hourly",
              AggregateUpserts.DIMENSIONS_SQL,
              AggregateUpserts.DIMENSIONS,
              DimensionCount::key,
              DimensionCount::standIn),
          new UpsertTable<>(
              "click_dimensions_daily",
              AggregateUpserts.DAY_DIMENSIONS_SQL,
              AggregateUpserts.DAY_DIMENSIONS,
              DimensionCount::key,
              DimensionCount::standIn),
          new UpsertTable<>(
              "click_dimensions_hourly",
              AggregateUpserts.HOUR_KEPT_SQL,
              AggregateUpserts.HOUR_KEPT,
              KeptValues::key,
              null),
          new UpsertTable<>(
              "click_dimensions_daily",
              AggregateUpserts.DAY_KEPT_SQL,
              AggregateUpserts.DAY_KEPT,
              KeptValues::key,
              null),
          new UpsertTable<>(
              "click_counts",
              ClickCountUpsert.REPLACING_SQL,
              new ClickCountUpsert(),
              MinuteCount::key,
              null),
          new UpsertTable<>(
              "click_hourly",
              AggregateUpserts.REPLACING_HOURS_SQL,
              AggregateUpserts.HOURS,
              PeriodTotals::key,
              null),
          new UpsertTable<>(
              "click_daily",
              AggregateUpserts.REPLACING_DAYS_SQL,
              AggregateUpserts.DAYS,
              PeriodTotals::key,
              null),
          new UpsertTable<>(
              "click_daily",
              AggregateUpserts.DAY_TOTALS_SQL,
              AggregateUpserts.DAY_TOTALS,
              PeriodTotals::key,
              null));
}
