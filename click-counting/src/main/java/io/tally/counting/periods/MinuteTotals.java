package io.tally.counting.periods;

import io.tally.counting.records.MinuteCount;

/**
 * One subtask's clicks on a link in one minute since it last sent them (a partial tally of the
 * pre-aggregation), with their new visitors and clicks per dimension value; the counting adds the
 * partials of every subtask into the link's minute, hour and day.
 *
 * @param code link code
 * @param minuteStart start of the minute, epoch milliseconds
 * @param tally the partial's totals
 */
public record MinuteTotals(String code, long minuteStart, ClickTally tally) {

  /** The row of {@code click_counts}. */
  public MinuteCount count() {
    return new MinuteCount(code, minuteStart, tally.clicks, tally.botClicks);
  }
}
