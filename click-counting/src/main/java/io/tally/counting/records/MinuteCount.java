package io.tally.counting.records;

import java.util.List;

/**
 * The totals of one link for one event-time minute: a full value, never an increment, so that
 * writing it twice leaves the same row.
 *
 * @param code link code
 * @param minuteStart start of the minute, epoch milliseconds
 * @param clicks human clicks
 * @param botClicks clicks flagged as bots
 */
public record MinuteCount(String code, long minuteStart, long clicks, long botClicks) {

  /** The row this count writes: {@code click_counts}' key. */
  public List<Object> key() {
    return List.of(code, minuteStart);
  }
}
