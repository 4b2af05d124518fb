package io.tally.counting.functions;

import java.util.List;
import java.util.function.LongSupplier;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.OperatorStateStore;
import org.apache.flink.api.common.typeinfo.Types;

/**
 * An instant an operator chooses once for the life of its job's state and keeps in union operator
 * state, so that every subtask reads the same value through restores, rescales and upgrades: the
 * earliest of what was restored, or, when nothing was, the first choice, written back at once.
 */
final class InstantChosenOnce {

  private InstantChosenOnce() {}

  /**
   * The instant kept under {@code name}, choosing it with {@code firstChoice} when the state holds
   * none.
   */
  static long restore(OperatorStateStore store, String name, LongSupplier firstChoice)
      throws Exception {
    ListState<Long> state = store.getUnionListState(new ListStateDescriptor<>(name, Types.LONG));
    long chosen = Long.MAX_VALUE;
    boolean restored = false;
    for (Long instant : state.get()) {
      chosen = Math.min(chosen, instant);
      restored = true;
    }
    if (!restored) {
      chosen = firstChoice.getAsLong();
    }
    state.update(List.of(chosen));
    return chosen;
  }
}
