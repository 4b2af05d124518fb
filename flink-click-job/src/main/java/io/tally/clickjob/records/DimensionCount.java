package io.tally.clickjob.records;

import java.util.List;

/**
 * The clicks of one link in one hour or UTC day with one value of a dimension: human clicks for
 * {@code country}, {@code referrer}, {@code browser}, {@code os} and {@code device}, bot clicks for
 * {@code bot_kind}. A full value, never an increment.
 *
 * @param code link code
 * @param periodStart start of the hour or day, epoch milliseconds
 * @param dimension the dimension's name, as in {@code click_dimensions_hourly.dimension}
 * @param value the value, {@code ""} when unknown or absent
 * @param clicks clicks with that value in the period
 */
public record DimensionCount(
    String code, long periodStart, String dimension, String value, long clicks) {

  /** The row this count writes: its table's key. */
  public List<Object> key() {
    return List.of(code, periodStart, dimension, value);
  }
}
