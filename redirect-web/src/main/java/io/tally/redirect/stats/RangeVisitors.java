package io.tally.redirect.stats;

import io.tally.event.VisitorSketches;
import java.util.ArrayList;
import java.util.List;

/**
 * A range's unique visitors, counted over its {@link VisitorSpan}: exact for one hour or one day,
 * else the union of the span's day sketches.
 *
 * @param span the period counted over
 * @param visitors unique visitors of the span
 * @param exact whether {@code visitors} is exact rather than an estimate
 * @param unsketchedDays days of the span that had visitors but no sketch, each added as its own
 *     daily count
 */
public record RangeVisitors(VisitorSpan span, long visitors, boolean exact, int unsketchedDays) {

  /** The exact visitors of a one-hour or one-day span, or of an empty one. */
  public static RangeVisitors exact(VisitorSpan span, long visitors) {
    return new RangeVisitors(span, visitors, true, 0);
  }

  /**
   * The visitors of several days: the union of their sketches, plus the daily visitors of the days
   * that have none. Those days are from before sketches were kept, or had visitors without keys,
   * and have no other count to merge, so adding them is the closest answer there is.
   */
  public static RangeVisitors ofDays(VisitorSpan span, List<StatsStore.DayVisitors> days) {
    List<byte[]> sketches = new ArrayList<>(days.size());
    long unsketchedVisitors = 0;
    int unsketchedDays = 0;
    for (StatsStore.DayVisitors day : days) {
      if (day.sketch() != null) {
        sketches.add(day.sketch());
      } else if (day.visitors() > 0) {
        unsketchedVisitors += day.visitors();
        unsketchedDays++;
      }
    }
    long estimate = sketches.isEmpty() ? 0 : VisitorSketches.estimateUnion(sketches);
    return new RangeVisitors(span, estimate + unsketchedVisitors, false, unsketchedDays);
  }

  /**
   * What a reader of the total needs to know about it, or null when the total is simply the range's
   * unique visitors.
   */
  public String note(StatsRange range) {
    StringBuilder note = new StringBuilder();
    boolean wider = span.widerThan(range);
    if (wider) {
      String period =
          switch (span.kind()) {
            case HOUR -> "the whole clock hour";
            case DAY -> "the whole UTC day";
            default -> "whole UTC days";
          };
      note.append("Unique visitors are counted over ")
          .append(period)
          .append(": ")
          .append(span.from())
          .append(" to ")
          .append(span.to())
          .append('.');
    }
    if (unsketchedDays > 0) {
      if (wider) {
        note.append(' ');
      }
      note.append(unsketchedDays)
          .append(wider ? " of those days" : " of the range's days")
          .append(" had visitors but no visitor sketch (from before sketches were kept, or with")
          .append(" visitor keys off for some of the day): each adds its own daily visitors, so a")
          .append(" person who came on such a day and on another day counts twice.");
    }
    return note.isEmpty() ? null : note.toString();
  }
}
