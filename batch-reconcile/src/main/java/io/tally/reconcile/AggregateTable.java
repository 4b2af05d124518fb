package io.tally.reconcile;

import java.time.Duration;
import java.util.List;

/**
 * An aggregate table of the read side that reconciliation recounts besides {@code click_counts}:
 * where its recount is staged, its key, its values and the period each row covers.
 */
public enum AggregateTable {
  HOURLY(
      "click_hourly",
      "reconcile_recount_hourly",
      "hour",
      Duration.ofHours(1),
      List.of("code", "hour"),
      List.of("clicks", "bot_clicks", "visitors"),
      List.of("clicks", "bot_clicks")),
  DAILY(
      "click_daily",
      "reconcile_recount_daily",
      "day",
      Duration.ofDays(1),
      List.of("code", "day"),
      List.of("clicks", "bot_clicks", "visitors", "visitor_sketch"),
      List.of("clicks", "bot_clicks")),
  DIMENSIONS(
      "click_dimensions_hourly",
      "reconcile_recount_dimensions",
      "hour",
      Duration.ofHours(1),
      List.of("code", "dimension", "hour", "value"),
      List.of("clicks"),
      List.of("clicks")),
  DAY_DIMENSIONS(
      "click_dimensions_daily",
      "reconcile_recount_dimensions_daily",
      "day",
      Duration.ofDays(1),
      List.of("code", "dimension", "day", "value"),
      List.of("clicks"),
      List.of("clicks"));

  final String table;
  final String staging;
  final String periodColumn;
  final Duration period;
  final List<String> keys;
  final List<String> values;

  /** The values that count clicks, whose removal {@code --max-removed-share} limits. */
  final List<String> clickValues;

  AggregateTable(
      String table,
      String staging,
      String periodColumn,
      Duration period,
      List<String> keys,
      List<String> values,
      List<String> clickValues) {
    this.table = table;
    this.staging = staging;
    this.periodColumn = periodColumn;
    this.period = period;
    this.keys = keys;
    this.values = values;
    this.clickValues = clickValues;
  }

  public String table() {
    return table;
  }

  /** Whether the rows are a breakdown: values of a dimension per link and period. */
  boolean breakdown() {
    return keys.contains("dimension");
  }

  /** Whether the period column is a date (UTC day) rather than an instant. */
  boolean dated() {
    return periodColumn.equals("day");
  }

  /**
   * The start of the period of the row aliased {@code alias}, as an instant (a day starts at its
   * UTC midnight).
   */
  String periodStart(String alias) {
    return dated()
        ? "(" + alias + ".day::timestamp AT TIME ZONE 'UTC')"
        : alias + "." + periodColumn;
  }
}
