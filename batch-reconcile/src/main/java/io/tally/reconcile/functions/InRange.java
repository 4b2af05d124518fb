package io.tally.reconcile.functions;

import io.tally.clickjob.records.Click;
import io.tally.reconcile.TimeRange;
import org.apache.flink.api.common.functions.FilterFunction;

/** Keeps the clicks whose event time falls in the range; the slack read around it is only for stragglers. */
public class InRange implements FilterFunction<Click> {

  private final long from;
  private final long to;

  public InRange(TimeRange range) {
    this.from = range.from().toEpochMilli();
    this.to = range.to().toEpochMilli();
  }

  @Override
  public boolean filter(Click click) {
    return click.ts() >= from && click.ts() < to;
  }
}
