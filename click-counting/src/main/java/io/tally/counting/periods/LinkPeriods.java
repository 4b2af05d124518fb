package io.tally.counting.periods;

import io.tally.counting.records.Click;
import io.tally.counting.records.DimensionCount;
import io.tally.counting.records.KeptValues;
import io.tally.counting.records.MinuteCount;
import io.tally.counting.records.PeriodRows;
import io.tally.counting.records.PeriodTotals;
import io.tally.event.VisitorSketches;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Consumer;
import org.apache.datasketches.cpc.CpcSketch;

/**
 * The open minutes, hours and UTC days of one link, what each has counted so far, and which of
 * their rows have changed since they were last written. This is where a click becomes rows, for the
 * streaming job and for reconciliation alike:
 *
 * <ul>
 *   <li>a minute writes its human and bot clicks ({@code click_counts});
 *   <li>an hour writes its clicks, bot clicks and new visitors in the hour ({@code click_hourly})
 *       and its clicks per dimension value ({@code click_dimensions_hourly});
 *   <li>a day writes its clicks, bot clicks, new visitors in the day and the sketch of their keys
 *       across days ({@code click_daily}, {@link VisitorSketches}) and its clicks per dimension
 *       value ({@code click_dimensions_daily}).
 * </ul>
 *
 * Every row is a whole total, never an increment. Hours and days are sums of whole minutes, so a
 * minute's clicks land in the hour and day the minute starts in.
 *
 * <p>Mutable and not thread-safe: one operator owns it, on its heap.
 */
public final class LinkPeriods {

  /**
   * A minute, an hour and a UTC day in milliseconds: the periods every count, roll-up, mark and
   * recount of both jobs is cut into, defined here only. Clicks are counted by the minute they
   * happened in ({@code click_counts} has a row per minute), and hours and days are sums of whole
   * minutes.
   */
  public static final long MINUTE = 60_000L;

  public static final long HOUR = 60 * MINUTE;

  public static final long DAY = 24 * HOUR;

  /** Periods by start. */
  private final TreeMap<Long, Period> minutes = new TreeMap<>();

  private final TreeMap<Long, Period> hours = new TreeMap<>();
  private final TreeMap<Long, Period> days = new TreeMap<>();

  /** Periods as restored from state. */
  public static LinkPeriods of(
      Collection<Period> minutes, Collection<Period> hours, Collection<Period> days) {
    LinkPeriods link = new LinkPeriods();
    minutes.forEach(p -> link.minutes.put(p.start, p));
    hours.forEach(p -> link.hours.put(p.start, p));
    days.forEach(p -> link.days.put(p.start, p));
    return link;
  }

  public Collection<Period> minutes() {
    return Collections.unmodifiableCollection(minutes.values());
  }

  public Collection<Period> hours() {
    return Collections.unmodifiableCollection(hours.values());
  }

  public Collection<Period> days() {
    return Collections.unmodifiableCollection(days.values());
  }

  /**
   * Adds a subtask's partial tally of one minute; each dimension of an hour or a day keeps at most
   * {@code maxValues} values ({@link DimensionCount#OTHER}). A period it opens is written as {@code
   * recount} says of its start.
   */
  public void add(long minuteStart, ClickTally partial, int maxValues, Recount recount) {
    long minuteEnd = minuteStart + MINUTE;
    period(minutes, minuteStart, minuteEnd, minuteEnd, recount).total.addTotals(partial);
    long hour = hourOf(minuteStart);
    period(hours, hour, hour + HOUR, minuteEnd, recount).total.addAll(partial, maxValues);
    long dayStart = dayOf(minuteStart);
    Period day = period(days, dayStart, dayStart + DAY, minuteEnd, recount);
    day.total.addAll(partial, maxValues);
    for (int i = 0; i < partial.dayVisitorKeyCount; i++) {
      day.addVisitorKey(partial.dayVisitorKeys[i]);
    }
  }

  /** Adds a subtask's partial tally of one minute, in a run that recounts nothing. */
  public void add(long minuteStart, ClickTally partial, int maxValues) {
    add(minuteStart, partial, maxValues, Recount.NONE);
  }

  /**
   * Adds one click of the minute starting at {@code minuteStart}, as {@link #add(long, ClickTally,
   * int)}.
   */
  public void add(long minuteStart, Click click, int maxValues) {
    long minuteEnd = minuteStart + MINUTE;
    period(minutes, minuteStart, minuteEnd, minuteEnd, Recount.NONE).total.addTotals(click);
    long hour = hourOf(minuteStart);
    period(hours, hour, hour + HOUR, minuteEnd, Recount.NONE).total.add(click, maxValues);
    long dayStart = dayOf(minuteStart);
    Period day = period(days, dayStart, dayStart + DAY, minuteEnd, Recount.NONE);
    day.total.add(click, maxValues);
    if (click.addsToDaySketch()) {
      day.addVisitorKey(click.rangeVisitor());
    }
  }

  /**
   * Which changed periods {@link #writeChanges} writes: every one that ends at or before {@code
   * closedBy}, the minutes that changed in a minute ending at or after {@code minutesFrom}, and the
   * hours and days that changed in a minute ending at or after {@code rollupsFrom}. A period
   * recounted whole ({@link Recount}) waits until it ends at or before {@code wholeBy}.
   */
  public record Due(long closedBy, long minutesFrom, long rollupsFrom, long wholeBy) {

    /** Every changed period. */
    public static final Due ALL =
        new Due(Long.MAX_VALUE, Long.MIN_VALUE, Long.MIN_VALUE, Long.MAX_VALUE);
  }

  /**
   * Writes the rows of every changed period that is {@code due}; each is then unchanged until more
   * clicks come. A period recounted whole ({@link Recount}) writes its first rows to replace the
   * stored ones: its totals whether lower or not, and every breakdown emptied ({@link KeptValues}
   * of no value) and written again. A day's row leaves its sketch out when no new visitor came
   * since it last sent it ({@link PeriodTotals#sketchKept}). Returns whether any period was
   * written.
   *
   * <p>With {@code clearBreakdowns}, for tables whose rows another writing of the same periods may
   * have left (an earlier run, or this one before a restore from a checkpoint): a full breakdown
   * sends its kept values ({@link KeptValues}) and then all of its rows the first time this object
   * writes it, and again whenever a kept value was displaced since it last did, so that the rows of
   * values no longer kept go; a period recounted in part never does. Without, for tables that only
   * this object writes.
   */
  public boolean writeChanges(String code, Due due, boolean clearBreakdowns, PeriodRows rows) {
    boolean wrote =
        writeDue(
            minutes,
            due.closedBy(),
            due.minutesFrom(),
            due.wholeBy(),
            minute -> {
              MinuteCount row =
                  new MinuteCount(code, minute.start, minute.total.clicks, minute.total.botClicks);
              if (minute.recountPending) {
                rows.recountedMinute(row);
              } else {
                rows.minute(row);
              }
            });
    wrote |=
        writeDue(
            hours,
            due.closedBy(),
            due.rollupsFrom(),
            due.wholeBy(),
            hour -> {
              PeriodTotals row =
                  new PeriodTotals(
                      code,
                      hour.start,
                      hour.total.clicks,
                      hour.total.botClicks,
                      hour.total.hourVisitors);
              if (hour.recountPending) {
                rows.recountedHour(row);
              } else {
                rows.hour(row);
              }
              hour.writeChangedValues(code, clearBreakdowns, rows::keptInHour, rows::dimension);
            });
    wrote |=
        writeDue(
            days,
            due.closedBy(),
            due.rollupsFrom(),
            due.wholeBy(),
            day -> {
              if (day.recountPending) {
                rows.recountedDay(day.totalsWithSketch(code));
              } else {
                rows.day(
                    day.sketchUnsent()
                        ? day.totalsWithSketch(code)
                        : day.totalsKeepingSketch(code));
              }
              day.writeChangedValues(code, clearBreakdowns, rows::keptInDay, rows::dayDimension);
            });
    return wrote;
  }

  /** Writes each due period of {@code periods} with {@code write} and marks it written. */
  private static boolean writeDue(
      TreeMap<Long, Period> periods,
      long closedBy,
      long liveFrom,
      long wholeBy,
      Consumer<Period> write) {
    boolean wrote = false;
    for (Period period : periods.values()) {
      if (period.due(closedBy, liveFrom, wholeBy)) {
        write.accept(period);
        period.written();
        wrote = true;
      }
    }
    return wrote;
  }

  /** Writes the rows of every changed period, into tables that only this object writes. */
  public void writeAllChanges(String code, PeriodRows rows) {
    writeChanges(code, Due.ALL, false, rows);
  }

  /**
   * Forgets the periods that end at or before {@code before}; returns whether there were any. A
   * period's unwritten rows are lost with it: write them first.
   */
  public boolean dropEndedBy(long before) {
    return drop(minutes, before) | drop(hours, before) | drop(days, before);
  }

  /** Whether no period is open. */
  public boolean isEmpty() {
    return minutes.isEmpty() && hours.isEmpty() && days.isEmpty();
  }

  /** Whether some period has rows not yet written. */
  public boolean hasChanges() {
    return changed(minutes) || changed(hours) || changed(days);
  }

  /** The start of the minute {@code time} falls in. */
  public static long minuteOf(long time) {
    return Math.floorDiv(time, MINUTE) * MINUTE;
  }

  public static long hourOf(long time) {
    return Math.floorDiv(time, HOUR) * HOUR;
  }

  public static long dayOf(long time) {
    return Math.floorDiv(time, DAY) * DAY;
  }

  private static Period period(
      TreeMap<Long, Period> periods, long start, long end, long changedIn, Recount recount) {
    Period period = periods.get(start);
    if (period == null) {
      period = new Period(start, end, new ClickTally());
      period.recountPending = recount.recountsWhole(start);
      period.recountedInPart = recount.recountsPart(start);
      periods.put(start, period);
    }
    period.changed(changedIn);
    return period;
  }

  private static boolean drop(TreeMap<Long, Period> periods, long before) {
    boolean dropped = false;
    for (Iterator<Map.Entry<Long, Period>> it = periods.entrySet().iterator(); it.hasNext(); ) {
      if (it.next().getValue().end > before) {
        break;
      }
      it.remove();
      dropped = true;
    }
    return dropped;
  }

  private static boolean changed(TreeMap<Long, Period> periods) {
    for (Period period : periods.values()) {
      if (period.changed) {
        return true;
      }
    }
    return false;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof LinkPeriods other
        && other.minutes.equals(minutes)
        && other.hours.equals(hours)
        && other.days.equals(days);
  }

  @Override
  public int hashCode() {
    return minutes.hashCode() * 31 + hours.hashCode();
  }

  @Override
  public String toString() {
    return "LinkPeriods[minutes="
        + minutes.values()
        + ", hours="
        + hours.values()
        + ", days="
        + days.values()
        + "]";
  }

  /** One minute, hour or day: its totals so far and what of them was written. */
  public static final class Period {
    private final long start;
    private final long end;
    private final ClickTally total;

    /** Whether its rows changed since they were last written. */
    boolean changed;

    /** The end of the latest minute that changed it since its rows were last written. */
    long changedIn = Long.MIN_VALUE;

    /** The dimension counts last written, by the total's key index; null when none was. */
    long[] writtenCounts;

    /**
     * Whether it is recounted whole and its rows, not written yet, are to replace the stored ones
     * ({@link Recount}).
     */
    boolean recountPending;

    /** Whether it is recounted from only some of its clicks ({@link Recount}). */
    boolean recountedInPart;

    /** A day's visitor keys across days; null until one comes, and in minutes and hours. */
    private CpcSketch visitorSketch;

    /** How many of the day's new visitors brought their key into {@link #visitorSketch}. */
    private long sketchedVisitors;

    /**
     * The day's new visitors when this object last sent its sketch, -1 before; on the heap only,
     * since sending the sketch again is harmless.
     */
    private long visitorsAtSketchSent = -1;

    /**
     * The dimensions (bits by index) whose kept values this object has sent; kept on the heap only,
     * since sending them again is harmless.
     */
    private int keptValuesSent;

    private Period(long start, long end, ClickTally total) {
      this.start = start;
      this.end = end;
      this.total = total;
    }

    /** A period whose rows were written with these totals. */
    public static Period written(long start, long end, ClickTally total) {
      Period period = new Period(start, end, total);
      period.written();
      return period;
    }

    /**
     * A period whose rows changed since they were last written, in a minute ending at {@code
     * changedIn}; {@code writtenCounts} are its dimension counts as last written, null when none
     * was.
     */
    public static Period unwritten(
        long start, long end, ClickTally total, long changedIn, long[] writtenCounts) {
      Period period = new Period(start, end, total);
      period.changed = true;
      period.changedIn = changedIn;
      period.writtenCounts = writtenCounts;
      return period;
    }

    /**
     * Gives a period restored from state its visitor sketch (null for none) and the number of new
     * visitors in it; returns the period.
     */
    public Period restoreVisitors(CpcSketch sketch, long sketched) {
      visitorSketch = sketch;
      sketchedVisitors = sketched;
      return this;
    }

    /**
     * Gives a period restored from state what its run recounts of it ({@link Recount}); returns the
     * period.
     */
    public Period restoreRecount(boolean pending, boolean inPart) {
      recountPending = pending;
      recountedInPart = inPart;
      return this;
    }

    /** Whether its rows are to replace the stored ones when first written ({@link Recount}). */
    public boolean recountPending() {
      return recountPending;
    }

    /** Whether it is recounted from only some of its clicks ({@link Recount}). */
    public boolean recountedInPart() {
      return recountedInPart;
    }

    /** A day's visitor sketch, null when it has none; the caller must not change it. */
    public CpcSketch visitorSketch() {
      return visitorSketch;
    }

    /** How many of the day's new visitors are in its visitor sketch. */
    public long sketchedVisitors() {
      return sketchedVisitors;
    }

    void addVisitorKey(long key) {
      if (visitorSketch == null) {
        visitorSketch = VisitorSketches.newSketch();
      }
      visitorSketch.update(key);
      sketchedVisitors++;
    }

    /**
     * The sketch the day's row stores: null unless every new visitor of the day brought a key. A
     * sketch of only some of them would answer a range too low without a word; a day without one is
     * added by its exact visitors, and the stats API says so.
     */
    byte[] storedVisitorSketch() {
      return sketchedVisitors == total.dayVisitors ? VisitorSketches.toBytes(visitorSketch) : null;
    }

    /** A day's row with the sketch it stores, which is then sent. */
    PeriodTotals totalsWithSketch(String code) {
      visitorsAtSketchSent = total.dayVisitors;
      return new PeriodTotals(
          code, start, total.clicks, total.botClicks, total.dayVisitors, storedVisitorSketch());
    }

    /** A day's row that leaves the stored sketch as it is. */
    PeriodTotals totalsKeepingSketch(String code) {
      return PeriodTotals.keepingSketch(
          code, start, total.clicks, total.botClicks, total.dayVisitors);
    }

    /**
     * Whether the day's row must carry its sketch: a new visitor came since this object last sent
     * it, or it never did. A sketch changes only with a new visitor's key.
     */
    boolean sketchUnsent() {
      return visitorsAtSketchSent != total.dayVisitors || visitorSketch == null;
    }

    /** Whether its rows changed since they were last written. */
    public boolean changed() {
      return changed;
    }

    /** The end of the latest minute that changed it since it was last written. */
    public long changedIn() {
      return changedIn;
    }

    /**
     * Its dimension counts as last written, by slot; null when none was. The caller must not change
     * them.
     */
    public long[] writtenCounts() {
      return writtenCounts;
    }

    public long start() {
      return start;
    }

    public long end() {
      return end;
    }

    /** Its totals so far; the caller must not change them. */
    public ClickTally total() {
      return total;
    }

    void changed(long minuteEnd) {
      changed = true;
      changedIn = Math.max(changedIn, minuteEnd);
    }

    /**
     * Writes the dimension counts that changed since the period was last written, and every count
     * of a dimension with a value displaced since. With {@code clearBreakdowns}, first sends the
     * kept values of each full dimension not sent yet or with a value displaced since, and writes
     * every count of that dimension, unless the period is recounted in part. A period whose recount
     * is pending empties every dimension and writes all of its counts.
     */
    void writeChangedValues(
        String code,
        boolean clearBreakdowns,
        Consumer<KeptValues> kept,
        Consumer<DimensionCount> out) {
      int full = fullDimensions();
      int cleared;
      if (recountPending) {
        cleared = (1 << ClickTally.DIMENSIONS.length) - 1;
      } else if (clearBreakdowns && !recountedInPart) {
        cleared = full & (~keptValuesSent | total.replacedDimensions);
      } else {
        cleared = 0;
      }
      for (int d = 0; cleared >> d != 0; d++) {
        if ((cleared & 1 << d) != 0) {
          String[] values = recountPending ? new String[0] : keptValues(d);
          kept.accept(new KeptValues(code, start, ClickTally.DIMENSIONS[d], values));
        }
      }
      keptValuesSent |= cleared;
      // A displaced value's slot holds another value now, whose count may equal the one written.
      int whole = cleared | (full & total.replacedDimensions);
      for (int i = 0; i < total.size; i++) {
        if ((whole & 1 << total.dimensions[i]) != 0
            || writtenCounts == null
            || i >= writtenCounts.length
            || writtenCounts[i] != total.counts[i]) {
          out.accept(
              new DimensionCount(
                  code, start, total.dimension(i), total.values[i], total.counts[i]));
        }
      }
    }

    /** The dimensions (bits by index) that count clicks under {@link DimensionCount#OTHER}. */
    private int fullDimensions() {
      int full = 0;
      for (int i = 0; i < total.size; i++) {
        if (total.values[i].equals(DimensionCount.OTHER)) {
          full |= 1 << total.dimensions[i];
        }
      }
      return full;
    }

    private String[] keptValues(int dimension) {
      List<String> kept = new ArrayList<>();
      for (int i = 0; i < total.size; i++) {
        if (total.dimensions[i] == dimension && !total.values[i].equals(DimensionCount.OTHER)) {
          kept.add(total.values[i]);
        }
      }
      return kept.toArray(String[]::new);
    }

    boolean due(long closedBy, long liveFrom, long wholeBy) {
      return changed
          && (!recountPending || end <= wholeBy)
          && (end <= closedBy || changedIn >= liveFrom);
    }

    void written() {
      changed = false;
      recountPending = false;
      total.replacedDimensions = 0;
      changedIn = Long.MIN_VALUE;
      if (total.size > 0) {
        writtenCounts = Arrays.copyOf(total.counts, total.size);
      }
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Period p
          && p.start == start
          && p.end == end
          && p.total.equals(total)
          && p.sketchedVisitors == sketchedVisitors
          && p.recountPending == recountPending
          && p.recountedInPart == recountedInPart
          && Arrays.equals(
              VisitorSketches.toBytes(p.visitorSketch), VisitorSketches.toBytes(visitorSketch));
    }

    @Override
    public int hashCode() {
      return Long.hashCode(start);
    }

    @Override
    public String toString() {
      return start
          + ".."
          + end
          + "="
          + total
          + (visitorSketch == null
              ? ""
              : ", visitors across days ~" + Math.round(visitorSketch.getEstimate()));
    }
  }
}
