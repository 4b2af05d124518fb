package io.tally.clickjob.functions;

import io.tally.clickjob.records.Click;

/**
 * How a visitor's clicks on a link are remembered within a UTC day: one entry per (day, visitor hash)
 * holding a bit for each hour of the day in which the visitor clicked. Shared by the streaming job's
 * {@link MarkNewVisitors} and reconciliation's recount, so both count unique visitors alike.
 */
public final class VisitorHours {

  static final long HOUR = 3_600_000L;
  static final long DAY = 24 * HOUR;

  private VisitorHours() {}

  /** Whether the click can count as a visitor at all: a person's, with a visitor hash. */
  public static boolean counts(Click click) {
    return !click.bot() && !click.visitor().isEmpty();
  }

  /** The entry of the click's visitor and day. */
  public static String entry(Click click) {
    return Math.floorDiv(click.ts(), DAY) + ":" + click.visitor();
  }

  /** The click's hour of the day as a bit. */
  public static int bit(Click click) {
    return 1 << (int) (Math.floorMod(click.ts(), DAY) / HOUR);
  }

  /** The click marked against the hours its visitor had already clicked in that day. */
  public static Click mark(Click click, int hoursSeen) {
    return click.withNewVisitor((hoursSeen & bit(click)) == 0, hoursSeen == 0);
  }
}
