package io.tally.reconcile.functions;

import io.tally.clickjob.records.Click;
import io.tally.reconcile.TimeRange;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.util.Collector;

/**
 * Keeps the clicks whose event time falls in the range; the slack read around it is only for
 * stragglers. Event time is the Kafka record timestamp, the clock the streaming job counts by and
 * {@link RecountLink} assigns minutes by, so that a click is in the range exactly when the minute
 * it is counted in is.
 */
public class InRange extends ProcessFunction<Click, Click> {

  private final TimeRange range;

  public InRange(TimeRange range) {
    this.range = range;
  }

  @Override
  public void processElement(Click click, Context ctx, Collector<Click> out) {
    if (range.contains(ctx.timestamp())) {
      out.collect(click);
    }
  }
}
