package io.tally.reconcile.functions;

import io.tally.clickjob.records.MinuteCount;
import org.apache.flink.api.common.functions.ReduceFunction;

/** Sums two counts of the same (code, minute). */
public class AddMinuteCounts implements ReduceFunction<MinuteCount> {

  @Override
  public MinuteCount reduce(MinuteCount a, MinuteCount b) {
    return new MinuteCount(a.code(), a.minuteStart(), a.clicks() + b.clicks(), a.botClicks() + b.botClicks());
  }
}
