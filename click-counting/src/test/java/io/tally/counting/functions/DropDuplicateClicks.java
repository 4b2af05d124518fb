package io.tally.counting.functions;

import io.tally.counting.records.Click;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.metrics.Counter;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.operators.KeyedProcessOperator;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.util.Collector;

/**
 * The dedup of releases before {@link DropDuplicatesByMinute}: each click id once, a flag per id in
 * keyed state ({@code seen}), remembered {@code forgetAfter} of the job's running time (forever
 * without it), the first copy judged late or on time once. Its state, under the by-id dedup's uid,
 * is what {@link DropDuplicatesByMinute} reads the ids made before it took over from, so the tests
 * make that state with it; its own tests state the rules both keep.
 */
public class DropDuplicateClicks extends KeyedProcessFunction<UUID, Click, Click>
    implements CheckpointedFunction {

  private final Duration forgetAfter;
  private final Lateness lateness;
  private transient ValueState<Boolean> seen;
  private transient Counter duplicates;
  private transient Downtime downtime;
  private transient JudgedWatermark watermark;

  /**
   * The dedup as the operator to run: one that tells the function each watermark, so that the
   * watermark it snapshots is the one the counting behind it had seen.
   *
   * @param forgetAfter how long an id is remembered; empty to remember every id of a bounded input
   * @param allowedLateness how long after its minute's end a click still counts
   */
  public static KeyedProcessOperator<UUID, Click, Click> operator(
      Optional<Duration> forgetAfter, Duration allowedLateness) {
    return new KeyedProcessOperator<>(new DropDuplicateClicks(forgetAfter, allowedLateness)) {
      @Override
      public void processWatermark(Watermark mark) throws Exception {
        ((DropDuplicateClicks) userFunction).watermark.advance(mark.getTimestamp());
        super.processWatermark(mark);
      }
    };
  }

  /**
   * @param forgetAfter how long an id is remembered; empty to remember every id of a bounded input
   * @param allowedLateness how long after its minute's end a click still counts
   */
  DropDuplicateClicks(Optional<Duration> forgetAfter, Duration allowedLateness) {
    this.forgetAfter = forgetAfter.orElse(null);
    this.lateness = new Lateness(allowedLateness.toMillis());
  }

  @Override
  public void initializeState(FunctionInitializationContext context) throws Exception {
    long now = Downtime.now(getRuntimeContext());
    if (forgetAfter != null) {
      downtime =
          Downtime.restore(
              context.getOperatorStateStore(), "seen", context.isRestored(), now, forgetAfter);
    }
    watermark = JudgedWatermark.restore(context.getOperatorStateStore());
  }

  @Override
  public void snapshotState(FunctionSnapshotContext context) throws Exception {
    if (downtime != null) {
      downtime.snapshot(Downtime.now(getRuntimeContext()));
    }
    watermark.snapshot();
  }

  @Override
  public void open(OpenContext openContext) {
    ValueStateDescriptor<Boolean> descriptor = new ValueStateDescriptor<>("seen", Types.BOOLEAN);
    if (forgetAfter != null) {
      descriptor.enableTimeToLive(downtime.expiringAfterWrite(forgetAfter));
    }
    seen = getRuntimeContext().getState(descriptor);
    duplicates = getRuntimeContext().getMetricGroup().counter("duplicatesDropped");
  }

  @Override
  public void processElement(Click click, Context ctx, Collector<Click> out) throws Exception {
    if (seen.value() != null) {
      duplicates.inc();
      ctx.output(DropDuplicatesByMinute.DUPLICATES, click);
      return;
    }
    seen.update(Boolean.TRUE);
    if (lateness.tooLate(click.ts(), watermark.get())) {
      ctx.output(DropDuplicatesByMinute.LATE, click);
      return;
    }
    out.collect(click);
  }
}
