package io.tally.counting.functions;

import io.tally.counting.records.Click;
import io.tally.counting.serde.ClickSerializer;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.metrics.Counter;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.operators.KeyedProcessOperator;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;

/**
 * Lets each click id through once. Keyed by the click id alone ({@link #KEY}), so a copy always
 * meets its original whatever any classifier, visitor hash or link says about either, and the load
 * is spread evenly however hot a link runs; the state is one flag per remembered id.
 *
 * <p>Given {@code forgetAfter}, an id is remembered that long, cleaned by RocksDB's compaction
 * filter: a copy redelivered later than that after its original is counted again. Producer retries
 * and job restarts redeliver within minutes, far inside the 24 h default. The live job runs {@link
 * DropDuplicatesByMinute}, which keeps the same promise and reads this one's flags for ids made
 * before it took over a state of this one's; the ids' flags of a job of the version before are this
 * one's state. Without {@code forgetAfter} nothing is forgotten.
 *
 * <p>This is also where a click's first copy is judged too late to count ({@link Lateness}), the
 * one judgement every later step abides by: a later step's watermark, the least of its inputs', is
 * never ahead of the one here when the click passed, so a click on time here is on time there. A
 * late click goes to {@link #LATE} and is remembered, so a late copy of a counted click is only a
 * duplicate, and a late click a dead letter once. Over a bounded input there is no watermark and
 * nothing is late.
 *
 * <p>Both judgements outlive a restart: the watermark is kept in operator state ({@link
 * JudgedWatermark}), and the ids' TTL counts only the time the job ran ({@link Downtime}). The live
 * job runs {@link DropDuplicatesByMinute}, which keeps the same rules at a fraction of the cost.
 */
public class DropDuplicateClicks extends KeyedProcessFunction<UUID, Click, Click>
    implements CheckpointedFunction {

  /** The dedup's key: the click id. */
  public static final KeySelector<Click, UUID> KEY = Click::clickId;

  /** First copies too late to count. */
  public static final OutputTag<Click> LATE = new OutputTag<>("late-clicks", ClickSerializer.TYPE);

  /**
   * Copies dropped, for the ledger that counts them per link; a step that ignores it pays nothing.
   */
  public static final OutputTag<Click> DUPLICATES =
      new OutputTag<>("duplicate-clicks", ClickSerializer.TYPE);

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
      ctx.output(DUPLICATES, click);
      return;
    }
    seen.update(Boolean.TRUE);
    if (lateness.tooLate(click.ts(), watermark.get())) {
      ctx.output(LATE, click);
      return;
    }
    out.collect(click);
  }
}
