package io.tally.counting.functions;

import java.util.ArrayList;
import java.util.List;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.util.AbstractStreamOperatorTestHarness;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Opens operator test harnesses as subtasks of a job, each restored from a snapshot of an earlier
 * run when given one, and closes them after each test.
 */
final class HarnessesOpened implements AfterEachCallback {

  private final List<AbstractStreamOperatorTestHarness<?>> opened = new ArrayList<>();

  /**
   * Opens {@code harness}, built as one of {@code parallelism} subtasks, after restoring its share
   * of {@code state} (of a run at {@code oldParallelism}) unless null.
   */
  <H extends AbstractStreamOperatorTestHarness<?>> H open(
      H harness,
      OperatorSubtaskState state,
      int maxParallelism,
      int oldParallelism,
      int parallelism,
      int subtask)
      throws Exception {
    if (state != null) {
      harness.initializeState(
          AbstractStreamOperatorTestHarness.repartitionOperatorState(
              state, maxParallelism, oldParallelism, parallelism, subtask));
    }
    harness.open();
    opened.add(harness);
    return harness;
  }

  @Override
  public void afterEach(ExtensionContext context) throws Exception {
    for (var harness : opened) {
      harness.close();
    }
    opened.clear();
  }
}
