package io.tally.clickjob.functions;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.counting.records.LedgerMark;
import io.tally.counting.records.LedgerMark.Kind;
import io.tally.counting.records.LedgerRow;
import io.tally.counting.records.MinuteCount;
import java.time.Duration;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.api.operators.KeyedProcessOperator;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.junit.jupiter.api.Test;

/** Tests for {@link CountLedgerMarks}. */
class CountLedgerMarksTest {

  private static final long HOUR = Duration.ofHours(1).toMillis();
  private static final long T = 1_764_547_200_000L; // an hour's start

  @Test
  void eachChangeSendsTheHoursWholeTotalsByKind() throws Exception {
    try (var harness = harness()) {
      harness.open();
      harness.processElement(new LedgerMark("abc", T + 5, Kind.DUPLICATE), T);
      harness.processElement(new LedgerMark("abc", T + HOUR - 1, Kind.DUPLICATE), T);
      harness.processElement(new LedgerMark("abc", T + 7, Kind.LATE), T);
      harness.processElement(new LedgerMark("abc", T + HOUR, Kind.DUPLICATE), T);
      harness.processElement(new LedgerMark("xyz", T + 9, Kind.DUPLICATE), T);
      harness.processElement(LedgerMark.refusedRow(new MinuteCount("abc", T + 60_000, 3, 0)), T);

      assertThat(harness.extractOutputValues())
          .containsExactly(
              new LedgerRow("abc", T, 1, 0, 0),
              new LedgerRow("abc", T, 2, 0, 0),
              new LedgerRow("abc", T, 2, 1, 0),
              new LedgerRow("abc", T + HOUR, 1, 0, 0),
              new LedgerRow("xyz", T, 1, 0, 0),
              new LedgerRow("abc", T, 2, 1, 1));
    }
  }

  @Test
  void totalsGoOnFromTheSnapshotAfterARestore() throws Exception {
    OperatorSubtaskState snapshot;
    try (var harness = harness()) {
      harness.open();
      harness.processElement(new LedgerMark("abc", T, Kind.DUPLICATE), T);
      harness.processElement(new LedgerMark("abc", T, Kind.DUPLICATE), T);
      snapshot = harness.snapshot(1, T);
      // Marked after the snapshot: replayed after the restore, it must count once.
      harness.processElement(new LedgerMark("abc", T, Kind.DUPLICATE), T);
    }
    try (var restored = harness()) {
      restored.initializeState(snapshot);
      restored.open();
      restored.processElement(new LedgerMark("abc", T, Kind.DUPLICATE), T);

      assertThat(restored.extractOutputValues()).containsExactly(new LedgerRow("abc", T, 3, 0, 0));
    }
  }

  @Test
  void anHourIsForgottenAfterItsLastMarkByTheTimeTheJobRan() throws Exception {
    OperatorSubtaskState stopped;
    try (var harness = harness()) {
      harness.open();
      harness.processElement(new LedgerMark("abc", T, Kind.DUPLICATE), T);
      stopped = harness.snapshot(1, 0);
    }
    try (var resumed = harness()) {
      // Stopped for two days: the hour is still there, as the dedup's click ids are.
      wallClock(resumed, Duration.ofDays(2).toMillis());
      resumed.initializeState(stopped);
      resumed.open();
      resumed.processElement(new LedgerMark("abc", T, Kind.DUPLICATE), T);
      assertThat(resumed.extractOutputValues()).containsExactly(new LedgerRow("abc", T, 2, 0, 0));
    }
    try (var harness = harness()) {
      harness.open();
      harness.processElement(new LedgerMark("abc", T, Kind.DUPLICATE), T);
      wallClock(harness, Duration.ofDays(2).toMillis());
      harness.processElement(new LedgerMark("abc", T, Kind.DUPLICATE), T);

      assertThat(harness.extractOutputValues())
          .as("the stored row keeps the larger total: the upsert never lowers it")
          .containsExactly(new LedgerRow("abc", T, 1, 0, 0), new LedgerRow("abc", T, 1, 0, 0));
    }
  }

  private static KeyedOneInputStreamOperatorTestHarness<Tuple2<String, Long>, LedgerMark, LedgerRow>
      harness() throws Exception {
    var harness =
        new KeyedOneInputStreamOperatorTestHarness<>(
            new KeyedProcessOperator<>(new CountLedgerMarks(Duration.ofDays(1))),
            CountLedgerMarks.KEY,
            CountLedgerMarks.KEY_TYPE);
    wallClock(harness, 0);
    return harness;
  }

  /** Sets the wall clock that state TTL and the operator read alike, as a running job's do. */
  private static void wallClock(
      KeyedOneInputStreamOperatorTestHarness<Tuple2<String, Long>, LedgerMark, LedgerRow> harness,
      long millis) {
    harness.setStateTtlProcessingTime(millis);
    try {
      harness.setProcessingTime(millis);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }
}
