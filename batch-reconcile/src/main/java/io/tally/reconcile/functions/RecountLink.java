package io.tally.reconcile.functions;

import io.tally.clickjob.functions.RollUpHoursAndDays;
import io.tally.clickjob.functions.VisitorHours;
import io.tally.clickjob.records.Click;
import io.tally.clickjob.records.ClickTally;
import io.tally.clickjob.records.DimensionCount;
import io.tally.clickjob.records.MinuteCount;
import io.tally.clickjob.records.PeriodTotals;
import org.apache.flink.api.common.accumulators.LongCounter;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.Collector;

/**
 * Recounts one link over a bounded replay: lets each click id through once, marks each visitor's first
 * human click per hour and day as the streaming job does, adds the clicks up per window of the event
 * (Kafka record) time, exactly as the streaming job's tumbling windows assign them, and per hour and UTC
 * day, and emits every minute's totals, and to side outputs every hour's and day's totals and hourly
 * breakdowns, when the link's input ends.
 *
 * <p>Made for BATCH mode, where a keyed operator receives each key's records together, sorted by key, keeps
 * state for that key alone, and fires its event-time timers when the key's input ends. Doing all of it in
 * one keyed operator needs one sort of the replay by link code; a dedup keyed by code followed by the
 * streaming job's window operator sorted it twice, and the sort dominated the profile. The sets of ids and
 * visitors live on the heap while their link is processed: one entry per distinct click, and one per
 * visitor and day, of the busiest link in the range.
 */
public class RecountLink extends KeyedProcessFunction<String, Click, MinuteCount> {

  /** Accumulator with the number of distinct clicks, for the report. */
  public static final String DISTINCT_CLICKS = "distinctClicks";

  private static final long HOUR = RollUpHoursAndDays.HOUR;
  private static final long DAY = RollUpHoursAndDays.DAY;

  private final long windowMillis;
  private transient MapState<String, Boolean> seen;
  private transient MapState<String, Integer> visitorHours;
  private transient MapState<Long, Totals> minutes;
  private transient MapState<Long, ClickTally> hours;
  private transient MapState<Long, Totals> days;
  private transient LongCounter distinct;

  public RecountLink(long windowMillis) {
    this.windowMillis = windowMillis;
  }

  @Override
  public void open(OpenContext openContext) {
    TypeInformation<ClickTally> tally = TypeInformation.of(ClickTally.class);
    TypeInformation<Totals> totals = TypeInformation.of(Totals.class);
    seen = getRuntimeContext().getMapState(new MapStateDescriptor<>("seen-click-ids", Types.STRING, Types.BOOLEAN));
    visitorHours = getRuntimeContext().getMapState(new MapStateDescriptor<>("visitor-hours-seen", Types.STRING, Types.INT));
    minutes = getRuntimeContext().getMapState(new MapStateDescriptor<>("minute-totals", Types.LONG, totals));
    hours = getRuntimeContext().getMapState(new MapStateDescriptor<>("hour-totals", Types.LONG, tally));
    days = getRuntimeContext().getMapState(new MapStateDescriptor<>("day-totals", Types.LONG, totals));
    distinct = getRuntimeContext().getLongCounter(DISTINCT_CLICKS);
  }

  @Override
  public void processElement(Click click, Context ctx, Collector<MinuteCount> out) throws Exception {
    if (seen.contains(click.clickId())) {
      return;
    }
    seen.put(click.clickId(), Boolean.TRUE);
    distinct.add(1L);
    long ts = ctx.timestamp();
    Click marked = click;
    if (VisitorHours.counts(click)) {
      String entry = VisitorHours.entry(click, ts);
      Integer before = visitorHours.get(entry);
      int hoursSeen = before == null ? 0 : before;
      marked = VisitorHours.mark(click, ts, hoursSeen);
      visitorHours.put(entry, hoursSeen | VisitorHours.bit(ts));
    }
    long minuteStart = TimeWindow.getWindowStartWithOffset(ts, 0, windowMillis);
    minutes.put(minuteStart, totals(minutes, minuteStart, windowMillis, ctx).add(marked, false));
    long hourStart = Math.floorDiv(ts, HOUR) * HOUR;
    ClickTally hour = hours.get(hourStart);
    if (hour == null) {
      hour = new ClickTally();
      ctx.timerService().registerEventTimeTimer(hourStart + HOUR - 1);
    }
    hours.put(hourStart, hour.add(marked));
    long dayStart = Math.floorDiv(ts, DAY) * DAY;
    days.put(dayStart, totals(days, dayStart, DAY, ctx).add(marked, marked.newVisitorInDay()));
  }

  /** The totals so far of the period starting at {@code start}; new ones get a timer at the period's end. */
  private static Totals totals(MapState<Long, Totals> periods, long start, long length, Context ctx) throws Exception {
    Totals totals = periods.get(start);
    if (totals == null) {
      totals = new Totals();
      ctx.timerService().registerEventTimeTimer(start + length - 1);
    }
    return totals;
  }

  @Override
  public void onTimer(long timestamp, OnTimerContext ctx, Collector<MinuteCount> out) throws Exception {
    // One timer may end a minute, an hour and a day at once: each is looked up by its own start.
    String code = ctx.getCurrentKey();
    long minuteStart = timestamp + 1 - windowMillis;
    Totals minute = minutes.get(minuteStart);
    if (minute != null) {
      out.collect(new MinuteCount(code, minuteStart, minute.clicks, minute.botClicks));
      minutes.remove(minuteStart);
    }
    long hourStart = timestamp + 1 - HOUR;
    ClickTally hour = hours.get(hourStart);
    if (hour != null) {
      ctx.output(RollUpHoursAndDays.HOURS, new PeriodTotals(code, hourStart, hour.clicks, hour.botClicks, hour.hourVisitors));
      for (int i = 0; i < hour.size; i++) {
        String key = hour.keys[i];
        ctx.output(RollUpHoursAndDays.DIMENSIONS, new DimensionCount(
            code, hourStart, ClickTally.dimensionOf(key), ClickTally.valueOf(key), hour.counts[i]));
      }
      hours.remove(hourStart);
    }
    long dayStart = timestamp + 1 - DAY;
    Totals day = days.get(dayStart);
    if (day != null) {
      ctx.output(RollUpHoursAndDays.DAYS, new PeriodTotals(code, dayStart, day.clicks, day.botClicks, day.visitors));
      days.remove(dayStart);
    }
  }

  /**
   * A minute's or a day's totals: what their rows hold, without the per-dimension tally that only hours
   * need (keeping one per minute and day as well tripled the work of tallying a click). Mutable, kept on
   * the heap while the link is processed.
   */
  public static final class Totals {
    /** Human clicks. */
    public long clicks;
    /** Bot clicks of every kind. */
    public long botClicks;
    /** Human clicks that were their visitor's first in the period. */
    public long visitors;

    Totals add(Click click, boolean newVisitor) {
      if (click.bot()) {
        botClicks++;
      } else {
        clicks++;
        if (newVisitor) {
          visitors++;
        }
      }
      return this;
    }
  }
}
