package io.tally.clickjob.functions;

import io.tally.clickjob.records.ClickTally;
import io.tally.clickjob.records.DimensionCount;
import io.tally.clickjob.records.MinuteCount;
import io.tally.clickjob.records.MinuteTotals;
import io.tally.clickjob.records.PeriodTotals;
import java.time.Duration;
import java.util.Iterator;
import java.util.Map;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.TimeDomain;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;

/**
 * Rolls a link's minute totals up into hour and day totals and hourly breakdowns, exactly, from the
 * window's firings.
 *
 * <p>A minute fires several times (early, on time, late), each time with its totals so far. This operator
 * remembers the last totals it saw of every open minute and adds only the difference to the minute's hour
 * and day, so the hour is always the sum of its minutes' latest totals. It passes each minute row on
 * ({@code click_counts}) at once. The hour, day and dimension rows that changed are written at most once
 * per {@code flushInterval} of processing time for live minutes, and every
 * {@value Liveness#BACKLOG_FLUSH_MILLIS} ms for a backlog's (see {@link Liveness}): a backlog fires an
 * hour's sixty minutes within seconds, and writing the hour's rows after each of them made PostgreSQL the
 * bottleneck. All rows are whole totals for the upserts that never lower a row.
 *
 * <p>State per link: the open minutes, hours (with their breakdowns) and days (totals only), each
 * dropped by an event-time timer once its last late firing can no longer come (its end plus the allowed
 * lateness), after whatever it still had to write was written; and what changed since the last write.
 */
public class RollUpHoursAndDays extends KeyedProcessFunction<String, MinuteTotals, MinuteCount> {

  public static final OutputTag<PeriodTotals> HOURS = new OutputTag<>("hour-totals") {};
  public static final OutputTag<PeriodTotals> DAYS = new OutputTag<>("day-totals") {};
  public static final OutputTag<DimensionCount> DIMENSIONS = new OutputTag<>("dimension-counts") {};

  /** An hour and a UTC day in milliseconds: the periods every roll-up, mark and recount is cut into. */
  public static final long HOUR = 3_600_000L;
  public static final long DAY = 24 * HOUR;

  private final long windowMillis;
  private final long allowedLatenessMillis;
  private final long flushMillis;
  private transient MapState<Long, ClickTally> minutes;
  private transient MapState<Long, ClickTally> hours;
  private transient MapState<Long, ClickTally> days;
  private transient MapState<Long, ClickTally> hourChanges;
  private transient MapState<Long, Boolean> dayChanges;

  /**
   * @param flushInterval how often the changed hour, day and dimension rows are written; a multiple of it
   *     on the processing-time clock, so a window that fired early at such a boundary is rolled up at once
   */
  public RollUpHoursAndDays(Duration window, Duration allowedLateness, Duration flushInterval) {
    this.windowMillis = window.toMillis();
    this.allowedLatenessMillis = allowedLateness.toMillis();
    this.flushMillis = flushInterval.toMillis();
  }

  @Override
  public void open(OpenContext openContext) {
    TypeInformation<ClickTally> tally = TypeInformation.of(ClickTally.class);
    minutes = getRuntimeContext().getMapState(new MapStateDescriptor<>("minute-totals-seen", Types.LONG, tally));
    hours = getRuntimeContext().getMapState(new MapStateDescriptor<>("hour-totals", Types.LONG, tally));
    days = getRuntimeContext().getMapState(new MapStateDescriptor<>("day-totals", Types.LONG, tally));
    hourChanges = getRuntimeContext().getMapState(new MapStateDescriptor<>("hour-changes-unwritten", Types.LONG, tally));
    dayChanges = getRuntimeContext().getMapState(new MapStateDescriptor<>("days-unwritten", Types.LONG, Types.BOOLEAN));
  }

  @Override
  public void processElement(MinuteTotals minute, Context ctx, Collector<MinuteCount> out) throws Exception {
    out.collect(minute.count());
    ClickTally seen = minutes.get(minute.minuteStart());
    // A firing that counts less than the last one means the window started over without its state (a
    // restore that left it behind): the clicks it counts now are new, since the dedup set dropped the old.
    ClickTally delta = seen == null || !minute.tally().covers(seen) ? minute.tally() : minute.tally().minus(seen);
    if (seen == null) {
      ctx.timerService().registerEventTimeTimer(minute.minuteStart() + windowMillis + allowedLatenessMillis);
    }
    if (delta.isEmpty()) {
      return;
    }
    minutes.put(minute.minuteStart(), minute.tally());

    long hourStart = Math.floorDiv(minute.minuteStart(), HOUR) * HOUR;
    addTo(hours, hourStart, HOUR, delta, ctx);
    ClickTally unwritten = hourChanges.get(hourStart);
    hourChanges.put(hourStart, unwritten == null ? delta.copy() : unwritten.addAll(delta));

    long dayStart = Math.floorDiv(minute.minuteStart(), DAY) * DAY;
    // A day is written without breakdowns (those are hourly), so its state keeps the totals only: a
    // popular link's day would otherwise carry every dimension value, read and written at every firing.
    addTo(days, dayStart, DAY, delta.totalsOnly(), ctx);
    dayChanges.put(dayStart, Boolean.TRUE);

    long now = ctx.timerService().currentProcessingTime();
    boolean live = Liveness.live(minute.minuteStart() + windowMillis, now);
    ctx.timerService().registerProcessingTimeTimer(
        Liveness.ceil(now, live ? flushMillis : Liveness.BACKLOG_FLUSH_MILLIS));
  }

  private void addTo(MapState<Long, ClickTally> periods, long start, long length, ClickTally delta, Context ctx)
      throws Exception {
    ClickTally period = periods.get(start);
    if (period == null) {
      period = new ClickTally();
      ctx.timerService().registerEventTimeTimer(start + length + allowedLatenessMillis);
    }
    period.addAll(delta);
    periods.put(start, period);
  }

  @Override
  public void onTimer(long timestamp, OnTimerContext ctx, Collector<MinuteCount> out) throws Exception {
    if (ctx.timeDomain() == TimeDomain.PROCESSING_TIME) {
      writeChanges(ctx, Long.MAX_VALUE);
      return;
    }
    // What an hour or day about to be dropped has not written yet is written first.
    writeChanges(ctx, timestamp);
    dropEnded(minutes, windowMillis, timestamp);
    dropEnded(hours, HOUR, timestamp);
    dropEnded(days, DAY, timestamp);
  }

  /**
   * Sends the hour and day rows that changed since they were last written, and each hour's changed
   * dimension rows: all of them, or only those of periods that end (lateness included) by {@code endedBy}.
   */
  private void writeChanges(OnTimerContext ctx, long endedBy) throws Exception {
    String code = ctx.getCurrentKey();
    for (Iterator<Map.Entry<Long, ClickTally>> it = hourChanges.iterator(); it.hasNext(); ) {
      Map.Entry<Long, ClickTally> change = it.next();
      long hourStart = change.getKey();
      if (endedBy != Long.MAX_VALUE && hourStart + HOUR + allowedLatenessMillis > endedBy) {
        continue;
      }
      ClickTally hour = hours.get(hourStart);
      ctx.output(HOURS, new PeriodTotals(code, hourStart, hour.clicks, hour.botClicks, hour.hourVisitors));
      ClickTally changed = change.getValue();
      for (int i = 0; i < changed.size; i++) {
        String key = changed.keys[i];
        ctx.output(DIMENSIONS, new DimensionCount(
            code, hourStart, ClickTally.dimensionOf(key), ClickTally.valueOf(key), hour.count(key)));
      }
      it.remove();
    }
    for (Iterator<Long> it = dayChanges.keys().iterator(); it.hasNext(); ) {
      long dayStart = it.next();
      if (endedBy != Long.MAX_VALUE && dayStart + DAY + allowedLatenessMillis > endedBy) {
        continue;
      }
      ClickTally day = days.get(dayStart);
      ctx.output(DAYS, new PeriodTotals(code, dayStart, day.clicks, day.botClicks, day.dayVisitors));
      it.remove();
    }
    clearIfEmpty(hourChanges);
    clearIfEmpty(dayChanges);
  }

  private void dropEnded(MapState<Long, ClickTally> periods, long length, long now) throws Exception {
    for (Iterator<Map.Entry<Long, ClickTally>> it = periods.iterator(); it.hasNext(); ) {
      if (it.next().getKey() + length + allowedLatenessMillis <= now) {
        it.remove();
      }
    }
    clearIfEmpty(periods);
  }

  /** An emptied map is still an entry on the heap backend; a link that goes quiet must leave nothing. */
  private static void clearIfEmpty(MapState<Long, ?> state) throws Exception {
    if (state.isEmpty()) {
      state.clear();
    }
  }
}
