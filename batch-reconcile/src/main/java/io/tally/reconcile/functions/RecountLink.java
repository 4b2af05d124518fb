package io.tally.reconcile.functions;

import io.tally.clickjob.functions.CountClicks;
import io.tally.clickjob.records.Click;
import io.tally.clickjob.records.MinuteCount;
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
 * Recounts one link over a bounded replay: lets each click id through once, adds up human and bot clicks
 * per window of the event (Kafka record) time, exactly as the streaming job's tumbling windows assign
 * them, and emits every window's totals when the link's input ends.
 *
 * <p>Made for BATCH mode, where a keyed operator receives each key's records together, sorted by key, keeps
 * state for that key alone, and fires its event-time timers when the key's input ends. Doing the dedup and
 * the count in one keyed operator needs one sort of the replay by link code; a dedup keyed by code
 * followed by the streaming job's window operator sorted it twice, and the sort dominated the profile. The
 * set of ids lives on the heap while its link is processed: one map entry per distinct click of the
 * busiest link in the range.
 */
public class RecountLink extends KeyedProcessFunction<String, Click, MinuteCount> {

  /** Accumulator with the number of distinct clicks, for the report. */
  public static final String DISTINCT_CLICKS = "distinctClicks";

  private final long windowMillis;
  private final CountClicks counting = new CountClicks();
  private transient MapState<String, Boolean> seen;
  private transient MapState<Long, CountClicks.Totals> windows;
  private transient LongCounter distinct;

  public RecountLink(long windowMillis) {
    this.windowMillis = windowMillis;
  }

  @Override
  public void open(OpenContext openContext) {
    seen = getRuntimeContext().getMapState(new MapStateDescriptor<>("seen-click-ids", Types.STRING, Types.BOOLEAN));
    windows = getRuntimeContext().getMapState(
        new MapStateDescriptor<>("window-totals", Types.LONG, TypeInformation.of(CountClicks.Totals.class)));
    distinct = getRuntimeContext().getLongCounter(DISTINCT_CLICKS);
  }

  @Override
  public void processElement(Click click, Context ctx, Collector<MinuteCount> out) throws Exception {
    if (seen.contains(click.clickId())) {
      return;
    }
    seen.put(click.clickId(), Boolean.TRUE);
    distinct.add(1L);
    long start = TimeWindow.getWindowStartWithOffset(ctx.timestamp(), 0, windowMillis);
    CountClicks.Totals totals = windows.get(start);
    if (totals == null) {
      totals = counting.createAccumulator();
      ctx.timerService().registerEventTimeTimer(start + windowMillis - 1);
    }
    windows.put(start, counting.add(click, totals));
  }

  @Override
  public void onTimer(long timestamp, OnTimerContext ctx, Collector<MinuteCount> out) throws Exception {
    long start = timestamp + 1 - windowMillis;
    CountClicks.Totals totals = windows.get(start);
    out.collect(new MinuteCount(ctx.getCurrentKey(), start, totals.clicks(), totals.botClicks()));
    windows.remove(start);
  }
}
