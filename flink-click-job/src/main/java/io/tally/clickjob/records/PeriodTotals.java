package io.tally.clickjob.records;

import java.util.List;

/**
 * The totals of one link for one hour or one UTC day: full values, never increments, so that
 * writing them twice leaves the same row.
 *
 * @param code link code
 * @param periodStart start of the hour or day, epoch milliseconds
 * @param clicks human clicks
 * @param botClicks bot clicks of every kind
 * @param visitors distinct visitors among the human clicks of the period
 */
public record PeriodTotals(
    String code, long periodStart, long clicks, long botClicks, long visitors) {

  /** The row these totals write: the hour or day table's key. */
  public List<Object> key() {
    return List.of(code, periodStart);
  }
}
