package io.tally.clickjob.functions;

import io.tally.clickjob.records.MinuteCount;
import org.apache.flink.metrics.Counter;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.Collector;

/**
 * Turns a window's totals into the row for (code, minute). Each firing, the on-time one and every late
 * one, carries the window's full totals so far, so the later row simply replaces the earlier.
 */
public class EmitMinuteCount extends ProcessWindowFunction<CountClicks.Totals, MinuteCount, String, TimeWindow> {

  private transient Counter rows;

  @Override
  public void open(OpenContext openContext) {
    rows = getRuntimeContext().getMetricGroup().counter("minuteRowsEmitted");
  }

  @Override
  public void process(String code, Context ctx, Iterable<CountClicks.Totals> totals, Collector<MinuteCount> out) {
    CountClicks.Totals t = totals.iterator().next();
    rows.inc();
    out.collect(new MinuteCount(code, ctx.window().getStart(), t.clicks(), t.botClicks()));
  }
}
