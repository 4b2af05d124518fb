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
 * ({@code click_counts}) and sends the changed hour row, day row and dimension rows to side outputs. All
 * rows are whole totals for the upserts that never lower a row.
 *
 * <p>State per link: the open minutes, hours and days, each dropped by an event-time timer once its last
 * late firing can no longer come (its end plus the allowed lateness).
 */
public class RollUpHoursAndDays extends KeyedProcessFunction<String, MinuteTotals, MinuteCount> {

  public static final OutputTag<PeriodTotals> HOURS = new OutputTag<>("hour-totals") {};
  public static final OutputTag<PeriodTotals> DAYS = new OutputTag<>("day-totals") {};
  public static final OutputTag<DimensionCount> DIMENSIONS = new OutputTag<>("dimension-counts") {};

  static final long HOUR = 3_600_000L;
  static final long DAY = 24 * HOUR;

  private final long windowMillis;
  private final long allowedLatenessMillis;
  private transient MapState<Long, ClickTally> minutes;
  private transient MapState<Long, ClickTally> hours;
  private transient MapState<Long, ClickTally> days;

  public RollUpHoursAndDays(Duration window, Duration allowedLateness) {
    this.windowMillis = window.toMillis();
    this.allowedLatenessMillis = allowedLateness.toMillis();
  }

  @Override
  public void open(OpenContext openContext) {
    TypeInformation<ClickTally> tally = TypeInformation.of(ClickTally.class);
    minutes = getRuntimeContext().getMapState(new MapStateDescriptor<>("minute-totals-seen", Types.LONG, tally));
    hours = getRuntimeContext().getMapState(new MapStateDescriptor<>("hour-totals", Types.LONG, tally));
    days = getRuntimeContext().getMapState(new MapStateDescriptor<>("day-totals", Types.LONG, tally));
  }

  @Override
  public void processElement(MinuteTotals minute, Context ctx, Collector<MinuteCount> out) throws Exception {
    out.collect(minute.count());
    ClickTally seen = minutes.get(minute.minuteStart());
    ClickTally delta = seen == null ? minute.tally() : minute.tally().minus(seen);
    if (seen == null) {
      ctx.timerService().registerEventTimeTimer(minute.minuteStart() + windowMillis + allowedLatenessMillis);
    }
    if (delta.isEmpty()) {
      return;
    }
    minutes.put(minute.minuteStart(), minute.tally());
    String code = minute.code();

    long hourStart = Math.floorDiv(minute.minuteStart(), HOUR) * HOUR;
    ClickTally hour = addTo(hours, hourStart, HOUR, delta, ctx);
    ctx.output(HOURS, new PeriodTotals(code, hourStart, hour.clicks, hour.botClicks, hour.hourVisitors));
    for (int i = 0; i < delta.size; i++) {
      String key = delta.keys[i];
      ctx.output(DIMENSIONS, new DimensionCount(
          code, hourStart, ClickTally.dimensionOf(key), ClickTally.valueOf(key), hour.count(key)));
    }

    long dayStart = Math.floorDiv(minute.minuteStart(), DAY) * DAY;
    ClickTally day = addTo(days, dayStart, DAY, delta, ctx);
    ctx.output(DAYS, new PeriodTotals(code, dayStart, day.clicks, day.botClicks, day.dayVisitors));
  }

  private ClickTally addTo(MapState<Long, ClickTally> periods, long start, long length, ClickTally delta, Context ctx)
      throws Exception {
    ClickTally period = periods.get(start);
    if (period == null) {
      period = new ClickTally();
      ctx.timerService().registerEventTimeTimer(start + length + allowedLatenessMillis);
    }
    period.addAll(delta);
    periods.put(start, period);
    return period;
  }

  @Override
  public void onTimer(long timestamp, OnTimerContext ctx, Collector<MinuteCount> out) throws Exception {
    dropEnded(minutes, windowMillis, timestamp);
    dropEnded(hours, HOUR, timestamp);
    dropEnded(days, DAY, timestamp);
  }

  private void dropEnded(MapState<Long, ClickTally> periods, long length, long now) throws Exception {
    for (Iterator<Map.Entry<Long, ClickTally>> it = periods.iterator(); it.hasNext(); ) {
      if (it.next().getKey() + length + allowedLatenessMillis <= now) {
        it.remove();
      }
    }
    // An emptied map is still an entry on the heap backend; a link that goes quiet must leave nothing.
    if (periods.isEmpty()) {
      periods.clear();
    }
  }
}
