package io.tally.clickjob.functions;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.counting.records.StreamProgress;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Tests for {@link EventTimeProgress}. */
class EventTimeProgressTest {

  private static final long MINUTE = 60_000L;
  private static final long STARTED_AT = 1_795_000_020_000L;

  private OneInputStreamOperatorTestHarness<String, StreamProgress> harness;

  @AfterEach
  void tearDown() throws Exception {
    harness.close();
  }

  @Test
  void reportsEachMinuteTheWatermarkClosesOnceInTheRunThatStartedWithoutState() throws Exception {
    open(null, STARTED_AT);
    harness.processWatermark(10 * MINUTE - 2);
    harness.processWatermark(10 * MINUTE - 1);
    harness.processWatermark(10 * MINUTE + 5);
    harness.processWatermark(Long.MAX_VALUE);

    assertThat(harness.extractOutputValues())
        .containsExactly(
            new StreamProgress(9 * MINUTE, STARTED_AT),
            new StreamProgress(10 * MINUTE, STARTED_AT));
  }

  @Test
  void aRestoredJobGoesOnInTheRunItsStateBelongsTo() throws Exception {
    open(null, STARTED_AT);
    OperatorSubtaskState snapshot = harness.snapshot(1, 1);
    harness.close();

    open(snapshot, STARTED_AT + 60 * MINUTE);
    harness.processWatermark(10 * MINUTE - 1);

    assertThat(harness.extractOutputValues())
        .containsExactly(new StreamProgress(10 * MINUTE, STARTED_AT));
  }

  private void open(OperatorSubtaskState state, long now) throws Exception {
    harness = new OneInputStreamOperatorTestHarness<>(new EventTimeProgress<>());
    harness.setProcessingTime(now);
    if (state != null) {
      harness.initializeState(state);
    }
    harness.open();
  }
}
