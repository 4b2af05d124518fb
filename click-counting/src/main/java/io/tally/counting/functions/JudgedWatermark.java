package io.tally.counting.functions;

import java.util.List;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.OperatorStateStore;
import org.apache.flink.api.common.typeinfo.Types;

/**
 * The watermark a dedup judges lateness by ({@link Lateness}), kept in operator state so that the
 * judgement outlives a restart: restored, a subtask judges by the least watermark any subtask had
 * at the snapshot until its own passes it, since until every split has sent one (an empty split
 * marks itself idle only after the idle timeout) its own is {@link Long#MIN_VALUE}, and a too-late
 * click let through then would land in a period the counting has already closed and dropped.
 */
final class JudgedWatermark {

  private final ListState<Long> state;
  private final long restored;
  private long current = Long.MIN_VALUE;

  private JudgedWatermark(ListState<Long> state, long restored) {
    this.state = state;
    this.restored = restored;
  }

  static JudgedWatermark restore(OperatorStateStore store) throws Exception {
    // Union state: after a rescale a subtask may meet the clicks of any subtask before it.
    ListState<Long> state =
        store.getUnionListState(new ListStateDescriptor<>("watermark", Types.LONG));
    long least = Long.MAX_VALUE;
    for (Long watermark : state.get()) {
      least = Math.min(least, watermark);
    }
    // The end of a bounded input, or of a job drained on stop, is no instant to judge from.
    return new JudgedWatermark(state, least == Long.MAX_VALUE ? Long.MIN_VALUE : least);
  }

  /** The operator's own watermark has come to {@code watermark}. */
  void advance(long watermark) {
    current = watermark;
  }

  /** The watermark to judge by now. */
  long get() {
    return Math.max(restored, current);
  }

  void snapshot() throws Exception {
    state.update(List.of(get()));
  }
}
