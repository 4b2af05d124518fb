package io.tally.reconcile.functions;

import io.tally.counting.periods.LinkPeriods;
import io.tally.counting.records.Click;
import io.tally.counting.records.DimensionCount;
import io.tally.counting.records.KeptValues;
import io.tally.counting.records.MinuteCount;
import io.tally.counting.records.PeriodRows;
import io.tally.counting.records.PeriodTotals;
import io.tally.counting.serde.LinkPeriodsSerializer;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;

/**
 * Recounts one link over a bounded replay of its unique, marked clicks ({@link
 * io.tally.counting.UniqueClicks}, the streaming job's own dedup and visitor marks): adds them into
 * the link's minutes (of each click's own {@code ts}, as the streaming job assigns them), hours and
 * UTC days with the streaming job's own {@link LinkPeriods}, and writes every period's rows when
 * the link's input ends: minutes as the main output, hours, days and hourly and daily breakdowns to
 * {@link #HOURS}, {@link #DAYS}, {@link #DIMENSIONS} and {@link #DAY_DIMENSIONS}, each for its own
 * staging table.
 *
 * <p>Made for BATCH mode, where a keyed operator receives each key's records together, sorted by
 * key, keeps state for that key alone, and fires its event-time timers when the key's input ends.
 * Its state is one total per minute, hour and day of the range: it grows with the range, not with
 * the link's clicks, so a viral link's recount needs no more memory than a quiet one's.
 */
public class RecountLink extends KeyedProcessFunction<String, Click, MinuteCount> {

  public static final OutputTag<PeriodTotals> HOURS = new OutputTag<>("hour-totals") {};
  public static final OutputTag<PeriodTotals> DAYS = new OutputTag<>("day-totals") {};
  public static final OutputTag<DimensionCount> DIMENSIONS = new OutputTag<>("dimension-counts") {};
  public static final OutputTag<DimensionCount> DAY_DIMENSIONS =
      new OutputTag<>("day-dimension-counts") {};

  private final int maxDimensionValues;
  private transient ValueState<LinkPeriods> periods;

  /**
   * @param maxDimensionValues values kept per hour and dimension ({@link
   *     io.tally.counting.CountingOptions})
   */
  public RecountLink(int maxDimensionValues) {
    this.maxDimensionValues = maxDimensionValues;
  }

  @Override
  public void open(OpenContext openContext) {
    periods =
        getRuntimeContext()
            .getState(new ValueStateDescriptor<>("link-periods", LinkPeriodsSerializer.TYPE));
  }

  @Override
  public void processElement(Click click, Context ctx, Collector<MinuteCount> out)
      throws Exception {
    LinkPeriods link = periods.value();
    if (link == null) {
      link = new LinkPeriods();
      ctx.timerService().registerEventTimeTimer(Long.MAX_VALUE);
    }
    link.add(LinkPeriods.minuteOf(click.ts()), click, maxDimensionValues);
    periods.update(link);
  }

  @Override
  public void onTimer(long timestamp, OnTimerContext ctx, Collector<MinuteCount> out)
      throws Exception {
    periods
        .value()
        .writeAllChanges(
            ctx.getCurrentKey(),
            new PeriodRows() {
              @Override
              public void minute(MinuteCount row) {
                out.collect(row);
              }

              @Override
              public void hour(PeriodTotals row) {
                ctx.output(HOURS, row);
              }

              @Override
              public void day(PeriodTotals row) {
                ctx.output(DAYS, row);
              }

              @Override
              public void dimension(DimensionCount row) {
                ctx.output(DIMENSIONS, row);
              }

              @Override
              public void dayDimension(DimensionCount row) {
                ctx.output(DAY_DIMENSIONS, row);
              }

              // The recount writes fresh staging tables, which no earlier run wrote.
              @Override
              public void keptInHour(KeptValues kept) {
                throw new IllegalStateException("a recount never clears a breakdown: " + kept);
              }

              @Override
              public void keptInDay(KeptValues kept) {
                throw new IllegalStateException("a recount never clears a breakdown: " + kept);
              }

              @Override
              public void recountedMinute(MinuteCount row) {
                throw new IllegalStateException("a recount never replaces a row: " + row);
              }

              @Override
              public void recountedHour(PeriodTotals row) {
                throw new IllegalStateException("a recount never replaces a row: " + row);
              }

              @Override
              public void recountedDay(PeriodTotals row) {
                throw new IllegalStateException("a recount never replaces a row: " + row);
              }
            });
    periods.clear();
  }
}
