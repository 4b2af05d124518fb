package io.tally.counting.functions;

import io.tally.counting.periods.LinkPeriods;
import java.io.Serializable;

/**
 * When a click is too late to count: the minute it falls in ended, and the allowed lateness after
 * it passed, behind the watermark. Judged once per click, by the dedup ({@link
 * DropDuplicatesByMinute}); the counting uses the same rule to know when a period can change no
 * more, so the two agree to the millisecond.
 */
public final class Lateness implements Serializable {

  private final long allowedLatenessMillis;

  public Lateness(long allowedLatenessMillis) {
    this.allowedLatenessMillis = allowedLatenessMillis;
  }

  /** Whether a click at {@code ts} is too late at {@code watermark}. */
  public boolean tooLate(long ts, long watermark) {
    long minuteEnd = LinkPeriods.minuteOf(ts) + LinkPeriods.MINUTE;
    return minuteEnd - 1 + allowedLatenessMillis <= watermark;
  }

  /**
   * Periods (minutes, and the hours and days that end with one) ending at or before this can change
   * no more at {@code watermark}: any click of theirs is too late.
   */
  public long settledBy(long watermark) {
    if (watermark == Long.MIN_VALUE || watermark == Long.MAX_VALUE) {
      return watermark;
    }
    return watermark + 1 - allowedLatenessMillis;
  }
}
