package io.tally.counting.functions;

import io.tally.counting.periods.LinkPeriods;
import io.tally.counting.records.Click;

/**
 * How a visitor's clicks on a link are remembered within a UTC day: one entry per (link, visitor
 * hash, day) ({@link io.tally.counting.records.VisitorDay}) holding a bit for each hour of the day
 * in which the visitor clicked.
 *
 * <p>Times are the click's own {@code ts}, as everywhere in the counting, not its Kafka record's
 * timestamp: every copy of a click carries the same {@code ts}, so a copy whose record says
 * otherwise (a topic with LogAppendTime, a replay through another producer) meets its original's
 * day and marks the hour it is counted in.
 */
public final class VisitorHours {

  private VisitorHours() {}

  /** Whether the click can count as a visitor at all: a person's, with a visitor hash. */
  public static boolean counts(Click click) {
    return !click.bot() && !click.visitor().isEmpty();
  }

  /** The hour of the day of event time {@code time} as a bit. */
  public static int bit(long time) {
    return 1 << (int) (Math.floorMod(time, LinkPeriods.DAY) / LinkPeriods.HOUR);
  }

  /** The click marked against the hours its visitor had already clicked in that day. */
  public static Click mark(Click click, long time, int hoursSeen) {
    return click.withNewVisitor((hoursSeen & bit(time)) == 0, hoursSeen == 0);
  }
}
