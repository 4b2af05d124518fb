package io.tally.counting.functions;

import io.tally.counting.records.Click;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

/**
 * Lets each click id through once. Keyed by the click id alone ({@link #KEY}), so a copy always
 * meets its original whatever any classifier, visitor hash or link says about either, and the load
 * is spread evenly however hot a link runs; the state is one flag per remembered id.
 *
 * <p>In the live job an id is remembered for {@code forgetAfter}, cleaned by RocksDB's compaction
 * filter: a copy redelivered later than that after its original is counted again. Producer retries
 * and job restarts redeliver within minutes, far inside the 24 h default. Over a bounded input
 * (reconciliation in BATCH mode, which processes one key at a time) nothing is forgotten.
 */
public class DropDuplicateClicks extends KeyedProcessFunction<UUID, Click, Click> {

  /** The dedup's key: the click id. */
  public static final KeySelector<Click, UUID> KEY = Click::clickId;

  private final Duration forgetAfter;
  private transient ValueState<Boolean> seen;
  private transient Counter duplicates;

  /**
   * @param forgetAfter how long an id is remembered; empty to remember every id of a bounded input
   */
  public DropDuplicateClicks(Optional<Duration> forgetAfter) {
    this.forgetAfter = forgetAfter.orElse(null);
  }

  @Override
  public void open(OpenContext openContext) {
    ValueStateDescriptor<Boolean> descriptor = new ValueStateDescriptor<>("seen", Types.BOOLEAN);
    if (forgetAfter != null) {
      descriptor.enableTimeToLive(ExpiringState.afterWrite(forgetAfter));
    }
    seen = getRuntimeContext().getState(descriptor);
    duplicates = getRuntimeContext().getMetricGroup().counter("duplicatesDropped");
  }

  @Override
  public void processElement(Click click, Context ctx, Collector<Click> out) throws Exception {
    if (seen.value() != null) {
      duplicates.inc();
      return;
    }
    seen.update(Boolean.TRUE);
    out.collect(click);
  }
}
