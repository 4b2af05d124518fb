package io.tally.clickjob.functions;

import io.tally.counting.periods.LinkPeriods;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;

/**
 * Reports how far the job's event time has got, as the end of the newest minute that has had its
 * on-time firing: every minute before it is final, up to late clicks within the allowed lateness.
 * The stats API shows it as {@code fresh_until}.
 *
 * <p>Runs with parallelism 1 behind the counting, so the watermark it sees is the minimum over
 * every counting subtask. It ignores the records and emits one value each time the watermark
 * crosses a minute's boundary.
 */
public class EventTimeProgress<T> extends AbstractStreamOperator<Long>
    implements OneInputStreamOperator<T, Long> {

  private transient long reported = Long.MIN_VALUE;

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
      output.collect(new StreamRecord<>(closedBefore));
    }
  }
}
