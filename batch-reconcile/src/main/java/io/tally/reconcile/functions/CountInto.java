package io.tally.reconcile.functions;

import org.apache.flink.api.common.accumulators.LongCounter;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;

/**
 * Passes records through unchanged and counts them in a named accumulator, which the job's driver
 * reads from the execution result for the report.
 */
public class CountInto<T> extends RichMapFunction<T, T> {

  private final String accumulator;
  private transient LongCounter counter;

  public CountInto(String accumulator) {
    this.accumulator = accumulator;
  }

  @Override
  public void open(OpenContext openContext) {
    counter = getRuntimeContext().getLongCounter(accumulator);
  }

  @Override
  public T map(T value) {
    counter.add(1L);
    return value;
  }
}
