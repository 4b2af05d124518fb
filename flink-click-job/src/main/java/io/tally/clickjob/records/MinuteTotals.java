package io.tally.clickjob.records;

/**
 * What one firing of a link's minute window says: the minute's totals so far, with its new visitors and
 * its clicks per dimension value. Early firings carry partial totals, later firings larger ones.
 *
 * @param code link code
 * @param minuteStart start of the minute, epoch milliseconds
 * @param tally the minute's totals so far
 */
public record MinuteTotals(String code, long minuteStart, ClickTally tally) {

  /** The row of {@code click_counts}. */
  public MinuteCount count() {
    return new MinuteCount(code, minuteStart, tally.clicks, tally.botClicks);
  }
}
