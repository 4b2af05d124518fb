package io.tally.counting.records;

import java.util.Arrays;
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
 * @param visitorSketch a day's stored visitor sketch ({@link io.tally.event.VisitorSketches}); null
 *     for an hour, for a day without visitor keys, and when {@code sketchKept}
 * @param sketchKept whether the day's stored sketch stays as it is: no new visitor came since its
 *     writer last sent it, so the row leaves out its bytes
 */
public record PeriodTotals(
    String code,
    long periodStart,
    long clicks,
    long botClicks,
    long visitors,
    byte[] visitorSketch,
    boolean sketchKept) {

  /** Totals with the sketch they store: an hour's (null), or a day's. */
  public PeriodTotals(
      String code, long periodStart, long clicks, long botClicks, long visitors, byte[] sketch) {
    this(code, periodStart, clicks, botClicks, visitors, sketch, false);
  }

  /** A day's totals that leave its stored sketch as it is ({@link #sketchKept}). */
  public static PeriodTotals keepingSketch(
      String code, long periodStart, long clicks, long botClicks, long visitors) {
    return new PeriodTotals(code, periodStart, clicks, botClicks, visitors, null, true);
  }

  /** Totals without a visitor sketch: an hour's, or a day's without visitor keys. */
  public PeriodTotals(String code, long periodStart, long clicks, long botClicks, long visitors) {
    this(code, periodStart, clicks, botClicks, visitors, null);
  }

  /** The row these totals write: the hour or day table's key. */
  public List<Object> key() {
    return List.of(code, periodStart);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof PeriodTotals t
        && t.code.equals(code)
        && t.periodStart == periodStart
        && t.clicks == clicks
        && t.botClicks == botClicks
        && t.visitors == visitors
        && t.sketchKept == sketchKept
        && Arrays.equals(t.visitorSketch, visitorSketch);
  }

  @Override
  public int hashCode() {
    return code.hashCode() * 31 + Long.hashCode(periodStart);
  }

  @Override
  public String toString() {
    return "PeriodTotals[code="
        + code
        + ", periodStart="
        + periodStart
        + ", clicks="
        + clicks
        + ", botClicks="
        + botClicks
        + ", visitors="
        + visitors
        + (visitorSketch == null ? "" : ", visitorSketch=" + visitorSketch.length + " bytes")
        + (sketchKept ? ", sketch kept" : "")
        + "]";
  }
}
