package io.tally.reconcile.functions;

import io.tally.counting.records.RawClick;
import java.util.HashMap;
import java.util.Map;
import org.apache.flink.api.common.accumulators.LongMaximum;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;

/**
 * Passes records through unchanged and measures how far out of order their timestamps are in the
 * log: the most any record is stamped before an earlier record of its partition. Producers' clocks
 * that disagree (one host 15 minutes fast, another 15 minutes slow) show here as the gap between
 * them. Reconciliation judges where the log's coverage starts from the earliest retained record's
 * timestamp, which can be trusted only to within this much. The measure goes to a named
 * accumulator.
 *
 * <p>Each partition's records reach one subtask in offset order (this runs chained to the source).
 */
public class MeasureTimestampDisorder extends RichMapFunction<RawClick, RawClick> {

  private final String accumulator;
  private transient LongMaximum disorder;
  private transient Map<Integer, Long> newestByPartition;

  public MeasureTimestampDisorder(String accumulator) {
    this.accumulator = accumulator;
  }

  @Override
  public void open(OpenContext openContext) {
    disorder = new LongMaximum(0);
    getRuntimeContext().addAccumulator(accumulator, disorder);
    newestByPartition = new HashMap<>();
  }

  @Override
  public RawClick map(RawClick record) {
    Long newest = newestByPartition.get(record.partition());
    if (newest == null || record.kafkaTimestamp() > newest) {
      newestByPartition.put(record.partition(), record.kafkaTimestamp());
    } else {
      disorder.add(newest - record.kafkaTimestamp());
    }
    return record;
  }
}
