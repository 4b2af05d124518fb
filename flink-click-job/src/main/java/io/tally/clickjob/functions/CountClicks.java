package io.tally.clickjob.functions;

import io.tally.clickjob.records.Click;
import io.tally.clickjob.records.ClickTally;
import org.apache.flink.api.common.functions.AggregateFunction;

/** Adds up a window's clicks into one {@link ClickTally}, the window's only state. */
public class CountClicks implements AggregateFunction<Click, ClickTally, ClickTally> {

  @Override
  public ClickTally createAccumulator() {
    return new ClickTally();
  }

  @Override
  public ClickTally add(Click click, ClickTally tally) {
    return tally.add(click);
  }

  @Override
  public ClickTally getResult(ClickTally tally) {
    return tally;
  }

  @Override
  public ClickTally merge(ClickTally a, ClickTally b) {
    return a.addAll(b);
  }
}
