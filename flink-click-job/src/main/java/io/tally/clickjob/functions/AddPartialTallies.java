package io.tally.clickjob.functions;

import io.tally.clickjob.records.ClickTally;
import io.tally.clickjob.records.MinuteTotals;
import org.apache.flink.api.common.functions.AggregateFunction;

/**
 * Adds up the partial tallies of a link's minute that {@link PreAggregateMinutes} sends from every subtask
 * into one {@link ClickTally}, the window's only state.
 */
public class AddPartialTallies implements AggregateFunction<MinuteTotals, ClickTally, ClickTally> {

  @Override
  public ClickTally createAccumulator() {
    return new ClickTally();
  }

  @Override
  public ClickTally add(MinuteTotals partial, ClickTally tally) {
    return tally.addAll(partial.tally());
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
