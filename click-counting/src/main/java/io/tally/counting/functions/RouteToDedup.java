package io.tally.counting.functions;

import io.tally.counting.classify.BotKind;
import io.tally.counting.records.Click;
import io.tally.counting.serde.ClickSerializer;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;

/**
 * Chooses each click's dedup: a person's click to {@link #BY_VISITOR} ({@link
 * DropDuplicateVisitorClicks}, placed by its visitor day so the marks follow without a shuffle),
 * the rest on to the dedup by click id ({@link DropDuplicatesByMinute#byClickId}).
 *
 * <p>Every copy of a click must take the same path, or each dedup would let one through. So the
 * choice reads only what the click event carries, never what a classifier makes of it (an upgraded
 * classifier may judge a replayed copy otherwise): a click goes by visitor when it has a visitor
 * hash, is neither a {@code HEAD} nor part of a burst as redirect-web marked it, and has a
 * version-7 id made from {@link #bySince} on. Agents classified as bots go by visitor too, deduped
 * there and passed by the marks unmarked.
 *
 * <p>{@link #bySince} is fixed once for the life of the job's state and kept in it: on a first
 * start, the beginning of time; when the state comes from a job that had no such path, the instant
 * that job's graph was built (plus a margin for clocks), so every click the earlier job may have
 * seen keeps the dedup by click id that remembers it. The instant comes from the graph, not from
 * each subtask's clock, so every subtask chooses alike. Whether the job resumes from state is told
 * by the submission as well as by the task: a router in a task of its own (chaining disabled) has
 * nothing to restore from an earlier job's savepoint, and Flink calls such a task fresh.
 */
public final class RouteToDedup extends ProcessFunction<Click, Click>
    implements CheckpointedFunction {

  /** People's clicks, to be deduped per visitor day. */
  public static final OutputTag<Click> BY_VISITOR =
      new OutputTag<>("by-visitor", ClickSerializer.TYPE);

  private final long sinceOnUpgrade;
  private final boolean resumesFromState;
  private transient long bySince;

  /**
   * @param sinceOnUpgrade from when on a person's click id goes by visitor if the state restored
   *     has no choice of its own (epoch milliseconds)
   * @param resumesFromState whether the job was submitted to resume from a savepoint or checkpoint
   */
  public RouteToDedup(long sinceOnUpgrade, boolean resumesFromState) {
    this.sinceOnUpgrade = sinceOnUpgrade;
    this.resumesFromState = resumesFromState;
  }

  @Override
  public void initializeState(FunctionInitializationContext context) throws Exception {
    bySince =
        InstantChosenOnce.restore(
            context.getOperatorStateStore(),
            "by-visitor-since",
            () -> context.isRestored() || resumesFromState ? sinceOnUpgrade : Long.MIN_VALUE);
  }

  @Override
  public void snapshotState(FunctionSnapshotContext context) {}

  /** The instant from which a person's click id goes by visitor. */
  long bySince() {
    return bySince;
  }

  @Override
  public void processElement(Click click, Context ctx, Collector<Click> out) {
    if (byVisitor(click)) {
      ctx.output(BY_VISITOR, click);
    } else {
      out.collect(click);
    }
  }

  private boolean byVisitor(Click click) {
    return !click.visitor().isEmpty()
        && !click.botKind().equals(BotKind.HEAD.label())
        && !click.botKind().equals(BotKind.BURST.label())
        && ClickIdBucket.fitsMadeFrom(click.clickId(), bySince);
  }
}
