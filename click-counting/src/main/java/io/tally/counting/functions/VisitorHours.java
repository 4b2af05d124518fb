package io.tally.counting.functions;

import io.tally.counting.records.Click;
import io.tally.counting.records.LinkPeriods;

/**
 * How a visitor's clicks on a link are remembered within a UTC day: one entry per (link, visitor
 * hash, day) holding a bit for each hour of the day in which the visitor clicked.
 *
 * <p>Times are the click's event time as the counting sees it, the Kafka record's timestamp, not
 * the {@code ts} in its JSON: a record whose timestamp differs (a topic with LogAppendTime, a
 * replay through another producer) must mark the hour it is counted in.
 */
public final class VisitorHours {

  private VisitorHours() {}

  /** Whether the click can count as a visitor at all: a person's, with a visitor hash. */
  public static boolean counts(Click click) {
    return !click.bot() && !click.visitor().isEmpty();
  }

  /** The UTC day of event time {@code time}, as days since the epoch. */
  public static long day(long time) {
    return Math.floorDiv(time, LinkPeriods.DAY);
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
