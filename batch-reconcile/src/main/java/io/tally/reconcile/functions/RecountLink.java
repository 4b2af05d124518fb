package io.tally.reconcile.functions;

import io.tally.clickjob.functions.RollUpHoursAndDays;
import io.tally.clickjob.records.Click;
import io.tally.clickjob.records.ClickTally;
import io.tally.clickjob.records.DimensionCount;
import io.tally.clickjob.records.MinuteCount;
import io.tally.clickjob.records.PeriodTotals;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.Collector;

/**
 * Recounts one link over a bounded replay of its unique, marked clicks ({@link io.tally.clickjob.UniqueClicks},
 * the streaming job's own dedup and visitor marks): adds them up per window of the event (Kafka record)
 * time, exactly as the streaming job's tumbling windows assign them, and per hour and UTC day, and emits
 * every minute's totals, and to side outputs every hour's and day's totals and hourly breakdowns, when the
 * link's input ends.
 *
 * <p>Made for BATCH mode, where a keyed operator receives each key's records together, sorted by key, keeps
 * state for that key alone, and fires its event-time timers when the key's input ends. Its state is one
 * total per minute, hour and day of the range: it grows with the range, not with the link's clicks, so a
 * viral link's recount needs no more memory than a quiet one's.
 */
public class RecountLink extends KeyedProcessFunction<String, Click, MinuteCount> {

  private static final long HOUR = RollUpHoursAndDays.HOUR;
  private static final long DAY = RollUpHoursAndDays.DAY;

  private final long windowMillis;
  private transient MapState<Long, Totals> minutes;
  private transient MapState<Long, ClickTally> hours;
  private transient MapState<Long, Totals> days;

  public RecountLink(long windowMillis) {
    this.windowMillis = windowMillis;
  }

  @Override
  public void open(OpenContext openContext) {
    TypeInformation<ClickTally> tally = TypeInformation.of(ClickTally.class);
    TypeInformation<Totals> totals = TypeInformation.of(Totals.class);
    minutes = getRuntimeContext().getMapState(new MapStateDescriptor<>("minute-totals", Types.LONG, totals));
    hours = getRuntimeContext().getMapState(new MapStateDescriptor<>("hour-totals", Types.LONG, tally));
    days = getRuntimeContext().getMapState(new MapStateDescriptor<>("day-totals", Types.LONG, totals));
  }

  @Override
  public void processElement(Click click, Context ctx, Collector<MinuteCount> out) throws Exception {
    long ts = ctx.timestamp();
    long minuteStart = TimeWindow.getWindowStartWithOffset(ts, 0, windowMillis);
    minutes.put(minuteStart, totals(minutes, minuteStart, windowMillis, ctx).add(click, false));
    long hourStart = Math.floorDiv(ts, HOUR) * HOUR;
    ClickTally hour = hours.get(hourStart);
    if (hour == null) {
      hour = new ClickTally();
      ctx.timerService().registerEventTimeTimer(hourStart + HOUR - 1);
    }
    hours.put(hourStart, hour.add(click));
    long dayStart = Math.floorDiv(ts, DAY) * DAY;
    days.put(dayStart, totals(days, dayStart, DAY, ctx).add(click, click.newVisitorInDay()));
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
