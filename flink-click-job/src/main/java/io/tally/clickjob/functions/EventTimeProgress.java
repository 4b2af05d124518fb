package io.tally.clickjob.functions;

import io.tally.counting.periods.LinkPeriods;
import io.tally.counting.records.StreamProgress;
import java.util.List;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.runtime.state.StateInitializationContext;
import org.apache.flink.runtime.state.StateSnapshotContext;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;

/**
 * Reports how far the job's event time has got, as the end of the newest minute that has had its
 * on-time firing: every minute before it is final, up to late clicks within the allowed lateness.
 * The stats API shows it as {@code fresh_until}; reconciliation leaves the minutes after it alone.
 *
 * <p>Runs with parallelism 1 behind the counting, so the watermark it sees is the minimum over
 * every counting subtask. It ignores the records and emits one value each time the watermark
 * crosses a minute's boundary.
 *
 * <p>Each value names its run ({@link StreamProgress}): the instant the job started without state,
 * kept in operator state from then on. A job started without state rewinds to recount the open day,
 * so its progress starts lower than its earlier run's and must replace it: otherwise reconciliation
 * would repair minutes that the stream is still recounting, and the recount would then undo it.
 */
public class EventTimeProgress<T> extends AbstractStreamOperator<StreamProgress>
    implements OneInputStreamOperator<T, StreamProgress> {

  private transient long reported;
  private transient long runStartedAt;
  private transient ListState<Long> runStartedAtState;

  @Override
  public void initializeState(StateInitializationContext context) throws Exception {
    super.initializeState(context);
    runStartedAtState =
        context
            .getOperatorStateStore()
            .getUnionListState(new ListStateDescriptor<>("run-started-at", Types.LONG));
    // Restored without this state (a savepoint from before runs were told apart): the run stored
    // as 0, the column's default.
    runStartedAt = context.isRestored() ? 0 : getProcessingTimeService().getCurrentProcessingTime();
    for (Long startedAt : runStartedAtState.get()) {
      runStartedAt = Math.max(runStartedAt, startedAt);
    }
  }

  @Override
  public void snapshotState(StateSnapshotContext context) throws Exception {
    super.snapshotState(context);
    runStartedAtState.update(List.of(runStartedAt));
  }

  @Override
  public void open() throws Exception {
    super.open();
    reported = Long.MIN_VALUE;
  }

  @Override
  public void processElement(StreamRecord<T> element) {}

  @Override
  public void processWatermark(Watermark mark) throws Exception {
    super.processWatermark(mark);
    // The end of input sends Long.MAX_VALUE, which is no instant.
    if (mark.getTimestamp() == Long.MAX_VALUE) {
      return;
    }
    long closedBefore = LinkPeriods.minuteOf(mark.getTimestamp() + 1);
    if (closedBefore > reported) {
      reported = closedBefore;
      output.collect(new StreamRecord<>(new StreamProgress(closedBefore, runStartedAt)));
    }
  }
}
