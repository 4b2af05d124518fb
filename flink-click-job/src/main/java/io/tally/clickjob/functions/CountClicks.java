package io.tally.clickjob.functions;

import io.tally.clickjob.records.Click;
import org.apache.flink.api.common.functions.AggregateFunction;

/** Adds up human and bot clicks of one window, keeping only two numbers as window state. */
public class CountClicks implements AggregateFunction<Click, CountClicks.Totals, CountClicks.Totals> {

  /** Running totals of a window: human clicks and bot clicks. */
  public record Totals(long clicks, long botClicks) {}

  @Override
  public Totals createAccumulator() {
    return new Totals(0, 0);
  }

  @Override
  public Totals add(Click click, Totals totals) {
    return click.bot()
        ? new Totals(totals.clicks(), totals.botClicks() + 1)
        : new Totals(totals.clicks() + 1, totals.botClicks());
  }

  @Override
  public Totals getResult(Totals totals) {
    return totals;
  }

  @Override
  public Totals merge(Totals a, Totals b) {
    return new Totals(a.clicks() + b.clicks(), a.botClicks() + b.botClicks());
  }
}
