package io.tally.reconcile.functions;

import io.tally.counting.records.DeadLetter;
import org.apache.flink.api.common.functions.RichMapFunction;

/**
 * Counts malformed records by reason in accumulators named {@code malformed.<reason>}; reconcile
 * writes no dead letters.
 */
public class CountMalformedByReason extends RichMapFunction<DeadLetter, String> {

  public static final String PREFIX = "malformed.";

  @Override
  public String map(DeadLetter letter) {
    getRuntimeContext().getLongCounter(PREFIX + letter.reason()).add(1L);
    return letter.reason();
  }
}
