package io.tally.clickjob.functions;

import io.tally.clickjob.records.ClickTally;
import io.tally.clickjob.records.MinuteTotals;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.Collector;

/**
 * Turns a window's tally into the minute's totals. Each firing, early, on time or late, carries the
 * window's full totals so far, so a later row simply replaces an earlier one. The tally is copied because
 * the window keeps adding to its accumulator after an early firing.
 */
public class EmitMinuteCount extends ProcessWindowFunction<ClickTally, MinuteTotals, String, TimeWindow> {

  private transient Counter rows;

  @Override
  public void open(OpenContext openContext) {
    rows = getRuntimeContext().getMetricGroup().counter("minuteRowsEmitted");
  }

  @Override
  public void process(String code, Context ctx, Iterable<ClickTally> tallies, Collector<MinuteTotals> out) {
    rows.inc();
    out.collect(new MinuteTotals(code, ctx.window().getStart(), tallies.iterator().next().copy()));
  }
}
