package io.tally.counting.functions;

import static io.tally.counting.Clicks.MINUTE;
import static io.tally.counting.Clicks.asBot;
import static io.tally.counting.Clicks.at;
import static io.tally.counting.Clicks.idAt;
import static io.tally.counting.Clicks.visit;
import static io.tally.counting.Clicks.withId;
import static org.assertj.core.api.Assertions.assertThat;

import io.tally.counting.records.Click;
import io.tally.counting.records.VisitorClick;
import io.tally.counting.serde.VisitorClickSerializer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.state.rocksdb.EmbeddedRocksDBStateBackend;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.util.KeyedTwoInputStreamOperatorTestHarness;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Tests for {@link DropDuplicateVisitorClicks}, on RocksDB as in production: {@link
 * DropDuplicatesByMinute}'s rules under a key placed by the visitor day, and people's clicks the
 * dedup by click id let through passed on to the marks.
 */
class DropDuplicateVisitorClicksTest {

  private static final Duration TTL = Duration.ofHours(24);
  private static final Duration LATENESS = Duration.ofMinutes(2);
  private static final int MAX_PARALLELISM = 128;

  @RegisterExtension final HarnessesOpened harnesses = new HarnessesOpened();

  private KeyedTwoInputStreamOperatorTestHarness<VisitorClick, Click, Click, Click> open(
      OperatorSubtaskState state, int oldParallelism, int parallelism, int subtask)
      throws Exception {
    var harness =
        new KeyedTwoInputStreamOperatorTestHarness<>(
            new DropDuplicateVisitorClicks(TTL, LATENESS),
            DropDuplicateVisitorClicks.KEY,
            DropDuplicateVisitorClicks.KEY,
            VisitorClickSerializer.TYPE,
            MAX_PARALLELISM,
            parallelism,
            subtask);
    harness.setStateBackend(new EmbeddedRocksDBStateBackend());
    harness.setStateTtlProcessingTime(0);
    harness.setProcessingTime(0);
    return harnesses.open(harness, state, MAX_PARALLELISM, oldParallelism, parallelism, subtask);
  }

  /** A person's click on {@code code} by visitor {@code visitor} with a version-7 id. */
  private static Click person(String label, String code, String visitor, long ts) {
    return withId(visit(label, code, ts, visitor), idAt(label, ts));
  }

  private static List<UUID> passed(
      KeyedTwoInputStreamOperatorTestHarness<VisitorClick, Click, Click, Click> harness) {
    return harness.extractOutputValues().stream().map(Click::clickId).toList();
  }

  private static List<UUID> copies(
      KeyedTwoInputStreamOperatorTestHarness<VisitorClick, Click, Click, Click> harness) {
    var side = harness.getSideOutput(DropDuplicatesByMinute.DUPLICATES);
    return side == null ? List.of() : side.stream().map(r -> r.getValue().clickId()).toList();
  }

  private static int subtaskOf(Object key, int parallelism) {
    return KeyGroupRangeAssignment.assignKeyToParallelOperator(key, MAX_PARALLELISM, parallelism);
  }

  @Test
  void eachClickLandsWhereItsVisitorDaysMarksAreKept() throws Exception {
    for (int i = 0; i < 1_000; i++) {
      Click click = person("c" + i, "link" + i % 7, "visitor-" + i, at(i * 90_000L));
      assertThat(subtaskOf(DropDuplicateVisitorClicks.KEY.getKey(click), 4))
          .isEqualTo(subtaskOf(MarkNewVisitors.KEY.getKey(click), 4));
    }
  }

  @Test
  void aCopyIsDroppedWhateverAClassifierSaysOfIt() throws Exception {
    var harness = open(null, 1, 1, 0);
    Click original = person("a", "abc", "ana", at(0));

    harness.processElement1(original, original.ts());
    harness.processElement1(asBot(original, "crawler"), original.ts());

    assertThat(passed(harness)).containsExactly(original.clickId());
    assertThat(copies(harness)).containsExactly(original.clickId());
  }

  @Test
  void aCopyAfterARestoreOrARescaleMeetsItsOriginal() throws Exception {
    var before = open(null, 1, 1, 0);
    List<Click> clicks = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      clicks.add(person("c" + i, "link" + i % 5, "visitor-" + i % 40, at(i * 1_000L)));
    }
    for (Click click : clicks) {
      before.processElement1(click, click.ts());
    }
    before.prepareSnapshotPreBarrier(1);
    OperatorSubtaskState snapshot = before.snapshot(1, 1);

    List<UUID> rescaledCopies = new ArrayList<>();
    for (int subtask = 0; subtask < 2; subtask++) {
      var rescaled = open(snapshot, 1, 2, subtask);
      for (Click click : clicks) {
        if (subtaskOf(DropDuplicateVisitorClicks.KEY.getKey(click), 2) == subtask) {
          rescaled.processElement1(click, click.ts());
        }
      }
      assertThat(passed(rescaled)).as("subtask " + subtask).isEmpty();
      rescaledCopies.addAll(copies(rescaled));
    }
    assertThat(rescaledCopies).hasSize(clicks.size());
  }

  @Test
  void aClickTheDedupByIdLetThroughPassesToTheMarksAsItCame() throws Exception {
    var harness = open(null, 1, 1, 0);
    harness.processBothWatermarks(new Watermark(at(60 * MINUTE)));
    Click judgedOnTime = visit("v3", "abc", at(0), "ana");

    harness.processElement2(judgedOnTime, judgedOnTime.ts());

    assertThat(passed(harness)).containsExactly(judgedOnTime.clickId());
    assertThat(harness.getSideOutput(DropDuplicatesByMinute.LATE)).isNull();
  }
}
