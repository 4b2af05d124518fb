package io.tally.reconcile.functions;

import io.tally.counting.records.Click;
import java.time.Instant;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.util.Collector;

/**
 * Keeps the clicks whose own {@code ts} falls in the range; the slack read around it is only for
 * stragglers. Both jobs count a click in the minute of its {@code ts} ({@link RecountLinks} here),
 * so a click is in the range exactly when the minute it is counted in is.
 */
public class InRange extends ProcessFunction<Click, Click> {

  private final long fromMillis;
  private final long toMillis;

  /** Keeps clicks from {@code from} on, and before {@code to}. */
  public InRange(Instant from, Instant to) {
    this.fromMillis = from.toEpochMilli();
    this.toMillis = to.toEpochMilli();
  }

  @Override
  public void processElement(Click click, Context ctx, Collector<Click> out) {
    if (click.ts() >= fromMillis && click.ts() < toMillis) {
      out.collect(click);
    }
  }
}
