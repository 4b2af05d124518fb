package io.tally.counting.functions;

import static io.tally.counting.Clicks.MINUTE;
import static io.tally.counting.Clicks.at;
import static io.tally.counting.Clicks.click;
import static io.tally.counting.Clicks.id;
import static io.tally.counting.Clicks.idAt;
import static io.tally.counting.Clicks.withId;
import static org.assertj.core.api.Assertions.assertThat;

import io.tally.counting.records.Click;
import io.tally.counting.serde.ClickIdSerializer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.state.rocksdb.EmbeddedRocksDBStateBackend;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.util.AbstractStreamOperatorTestHarness;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Tests for {@link DropDuplicatesByMinute}, on RocksDB as in production: the rules of the earlier
 * {@link DropDuplicateClicks} with version-7 ids kept by minute, which a restore, a rescale and a
 * copy arriving after its minute left the heap must not break.
 */
class DropDuplicatesByMinuteTest {

  private static final Duration TTL = Duration.ofHours(24);
  private static final Duration LATENESS = Duration.ofMinutes(2);
  private static final int MAX_PARALLELISM = 128;

  @RegisterExtension final HarnessesOpened harnesses = new HarnessesOpened();

  private KeyedOneInputStreamOperatorTestHarness<UUID, Click, Click> open(
      OperatorSubtaskState state, int parallelism, int subtask, long wallClock) throws Exception {
    return open(state, parallelism, subtask, wallClock, 1);
  }

  /** A subtask restored from {@code state} of a run at {@code oldParallelism}. */
  private KeyedOneInputStreamOperatorTestHarness<UUID, Click, Click> open(
      OperatorSubtaskState state, int parallelism, int subtask, long wallClock, int oldParallelism)
      throws Exception {
    return open(
        DropDuplicatesByMinute.byClickId(TTL, LATENESS),
        state,
        oldParallelism,
        parallelism,
        subtask,
        wallClock);
  }

  private KeyedOneInputStreamOperatorTestHarness<UUID, Click, Click> open(
      OneInputStreamOperator<Click, Click> operator,
      OperatorSubtaskState state,
      int oldParallelism,
      int parallelism,
      int subtask,
      long wallClock)
      throws Exception {
    var harness =
        new KeyedOneInputStreamOperatorTestHarness<>(
            operator,
            DropDuplicatesByMinute.BY_CLICK_ID,
            ClickIdSerializer.TYPE,
            MAX_PARALLELISM,
            parallelism,
            subtask);
    harness.setStateBackend(new EmbeddedRocksDBStateBackend());
    harness.setStateTtlProcessingTime(wallClock);
    harness.setProcessingTime(wallClock);
    return harnesses.open(harness, state, MAX_PARALLELISM, oldParallelism, parallelism, subtask);
  }

  /**
   * A checkpoint as a running job takes it: the operator's work before the barrier, then the
   * snapshot.
   */
  private static OperatorSubtaskState checkpoint(
      KeyedOneInputStreamOperatorTestHarness<UUID, Click, Click> harness, long id, long time)
      throws Exception {
    harness.prepareSnapshotPreBarrier(id);
    return harness.snapshot(id, time);
  }

  /** A person's click with a version-7 id made at its own time. */
  private static Click at7(String label, long ts) {
    return withId(click(label, "abc", ts), idAt(label, ts));
  }

  private static void send(
      KeyedOneInputStreamOperatorTestHarness<UUID, Click, Click> harness, Click... clicks)
      throws Exception {
    for (Click click : clicks) {
      harness.processElement(click, click.ts());
    }
  }

  private static List<UUID> passed(KeyedOneInputStreamOperatorTestHarness<UUID, Click, Click> h) {
    return h.extractOutputValues().stream().map(Click::clickId).toList();
  }

  private static List<UUID> copies(KeyedOneInputStreamOperatorTestHarness<UUID, Click, Click> h) {
    var side = h.getSideOutput(DropDuplicatesByMinute.DUPLICATES);
    return side == null ? List.of() : side.stream().map(r -> r.getValue().clickId()).toList();
  }

  private static long stateLookups(KeyedOneInputStreamOperatorTestHarness<UUID, Click, Click> h) {
    return ((DropDuplicatesByMinute) h.getOperator()).stateLookups();
  }

  @Test
  void letsEachIdThroughOnceReadingStateOncePerMinuteAndKeyGroupNotPerClick() throws Exception {
    var harness = open(null, 1, 0, 0);
    List<Click> clicks = new ArrayList<>();
    for (int i = 0; i < 2_000; i++) {
      clicks.add(at7("c" + i, at(i * 30L))); // one minute
    }
    for (Click click : clicks) {
      send(harness, click);
    }
    for (Click click : clicks.subList(0, 500)) {
      send(harness, click);
    }

    assertThat(passed(harness)).hasSize(2_000).doesNotHaveDuplicates();
    assertThat(copies(harness)).hasSize(500);
    assertThat(stateLookups(harness))
        .as("one read per bucket of the minute, at most one per key group")
        .isLessThanOrEqualTo(MAX_PARALLELISM);
  }

  @Test
  void aCopyAfterARestoreOrARescaleMeetsItsOriginal() throws Exception {
    var before = open(null, 1, 0, 0);
    List<Click> clicks = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      clicks.add(at7("c" + i, at(i * 1_000L)));
    }
    send(before, clicks.toArray(Click[]::new));
    OperatorSubtaskState snapshot = checkpoint(before, 1, 1);

    var restored = open(snapshot, 1, 0, 1);
    send(restored, clicks.toArray(Click[]::new));
    assertThat(passed(restored)).as("restored").isEmpty();

    List<UUID> rescaledCopies = new ArrayList<>();
    for (int subtask = 0; subtask < 2; subtask++) {
      var rescaled = open(snapshot, 2, subtask, 1);
      for (Click click : clicks) {
        if (subtaskOf(click.clickId(), 2) == subtask) {
          send(rescaled, click);
        }
      }
      assertThat(passed(rescaled)).as("subtask " + subtask).isEmpty();
      rescaledCopies.addAll(copies(rescaled));
    }
    assertThat(rescaledCopies).hasSize(clicks.size());
  }

  @Test
  void anIdAddedAfterTheLastCheckpointIsNewAgainWhenItsClickIsReplayedFromThere() throws Exception {
    var before = open(null, 1, 0, 0);
    send(before, at7("stored", at(0)));
    OperatorSubtaskState snapshot = checkpoint(before, 1, 1);
    send(before, at7("after", at(1_000)));

    var restored = open(snapshot, 1, 0, 1);
    send(restored, at7("stored", at(0)), at7("after", at(1_000)));

    assertThat(passed(restored)).containsExactly(idAt("after", at(1_000)));
  }

  @Test
  void aCopyArrivingAfterItsMinuteLeftTheHeapIsFoundInState() throws Exception {
    var harness = open(null, 1, 0, 0);
    send(harness, at7("early", at(0)));
    // The watermark moves an hour on: minute 0 is too old for the heap, and leaves it at the
    // checkpoint.
    harness.processWatermark(at(60 * MINUTE));
    send(harness, at7("now", at(60 * MINUTE + 1)));
    checkpoint(harness, 1, 1);
    long lookups = stateLookups(harness);

    send(harness, at7("early", at(0)), at7("now", at(60 * MINUTE + 1)));

    assertThat(copies(harness))
        .containsExactly(idAt("early", at(0)), idAt("now", at(60 * MINUTE + 1)));
    assertThat(stateLookups(harness) - lookups).as("the old copy's read").isEqualTo(1);
    assertThat(harness.getSideOutput(DropDuplicatesByMinute.LATE)).isNullOrEmpty();
  }

  @Test
  void aLateFirstClickIsLateOnceAndItsCopyADuplicate() throws Exception {
    var harness = open(null, 1, 0, 0);
    harness.processWatermark(at(60 * MINUTE));
    send(harness, at7("late", at(0)), at7("late", at(0)));

    assertThat(passed(harness)).isEmpty();
    assertThat(harness.getSideOutput(DropDuplicatesByMinute.LATE)).hasSize(1);
    assertThat(copies(harness)).containsExactly(idAt("late", at(0)));
  }

  @Test
  void lateIsJudgedByTheClicksOwnTimeNotItsRecords() throws Exception {
    var harness = open(null, 1, 0, 0);
    harness.processWatermark(at(3 * MINUTE - 1));
    // A copy replayed now: its record says now, the click says minute 0.
    harness.processElement(at7("replayed", at(1_000)), at(3 * MINUTE));

    assertThat(passed(harness)).isEmpty();
    assertThat(harness.getSideOutput(DropDuplicatesByMinute.LATE)).hasSize(1);
  }

  @Test
  void rightAfterARestoreLatenessIsJudgedAgainstTheWatermarkOfTheSnapshot() throws Exception {
    var running = open(null, 1, 0, 0);
    running.processWatermark(at(3 * MINUTE - 1)); // minute 0 is closed for good
    var restored = open(running.snapshot(1, 1), 1, 0, 1);

    // Until the sources send watermarks again, the operator's own is Long.MIN_VALUE.
    assertMinuteZeroLateAndMinuteOneOnTime(restored);
  }

  @Test
  void afterARescaleEverySubtaskJudgesFromTheLeastWatermarkBefore() throws Exception {
    var ahead = open(null, 2, 0, 0);
    var behind = open(null, 2, 1, 0);
    ahead.processWatermark(at(4 * MINUTE - 1)); // minutes 0 and 1 are closed here
    behind.processWatermark(at(3 * MINUTE - 1)); // only minute 0 here
    var merged =
        AbstractStreamOperatorTestHarness.repackageState(
            ahead.snapshot(1, 1), behind.snapshot(1, 1));
    var rescaled = open(merged, 1, 0, 1, 2);

    // Minute 1 was still open on the slower subtask.
    assertMinuteZeroLateAndMinuteOneOnTime(rescaled);
  }

  private static void assertMinuteZeroLateAndMinuteOneOnTime(
      KeyedOneInputStreamOperatorTestHarness<UUID, Click, Click> harness) throws Exception {
    send(harness, at7("late", at(1_000)), at7("on-time", at(MINUTE + 1_000)));

    assertThat(passed(harness)).containsExactly(idAt("on-time", at(MINUTE + 1_000)));
    assertThat(harness.getSideOutput(DropDuplicatesByMinute.LATE))
        .extracting(r -> r.getValue().clickId())
        .containsExactly(idAt("late", at(1_000)));
  }

  @Test
  void anIdOfAClockFarAheadLeavesTheHeapAtTheNextCheckpointAndIsStillKnown() throws Exception {
    var harness = open(null, 1, 0, 0);
    harness.processWatermark(at(0));
    long year = Duration.ofDays(365).toMillis();
    send(harness, at7("now", at(0)));
    Click farAhead = withId(at7("skewed", at(0)), idAt("skewed", at(year)));
    send(harness, farAhead, farAhead);
    checkpoint(harness, 1, 1);
    long lookups = stateLookups(harness);
    send(harness, farAhead);

    assertThat(passed(harness)).hasSize(2);
    assertThat(copies(harness)).hasSize(2);
    assertThat(stateLookups(harness) - lookups).as("its bucket read back once").isEqualTo(1);
    checkpoint(harness, 2, 2);
    assertThat(((DropDuplicatesByMinute) harness.getOperator()).idsOnHeap())
        .as("only the id of a minute near the watermark stays")
        .isEqualTo(1);
  }

  @Test
  void anIdThatIsNotVersionSevenIsRememberedOneByOne() throws Exception {
    var harness = open(null, 1, 0, 0);
    send(harness, click("name-based", "abc", at(0)), click("name-based", "abc", at(0)));
    OperatorSubtaskState snapshot = checkpoint(harness, 1, 1);
    var restored = open(snapshot, 1, 0, 1);
    send(restored, click("name-based", "abc", at(0)));

    assertThat(passed(harness)).containsExactly(id("name-based"));
    assertThat(passed(restored)).isEmpty();
  }

  @Test
  void anUpgradeFromTheDedupOfOneFlagPerIdKeepsTheIdsItRemembered() throws Exception {
    var old =
        open(DropDuplicateClicks.operator(Optional.of(TTL), LATENESS), null, 1, 1, 0, at(MINUTE));
    send(old, at7("before", at(0)));
    OperatorSubtaskState snapshot = checkpoint(old, 1, at(MINUTE));

    var upgraded = open(snapshot, 1, 0, at(2 * MINUTE));
    // Made after the upgrade and its margin for clocks.
    long after = at(2 * MINUTE) + DropDuplicatesByMinute.CLOCK_MARGIN_MILLIS;
    send(upgraded, at7("before", at(0)), at7("after", after), at7("after", after));

    assertThat(passed(upgraded)).containsExactly(idAt("after", after));
    assertThat(stateLookups(upgraded)).as("the new id went to a bucket").isEqualTo(1);
  }

  @Test
  void subtasksRestoredAtDifferentTimesFromTheOldDedupsStateAgreeWhichIdsItMayHold()
      throws Exception {
    long snapshotAt = at(MINUTE);
    var old =
        open(DropDuplicateClicks.operator(Optional.of(TTL), LATENESS), null, 1, 1, 0, snapshotAt);
    OperatorSubtaskState oldState = checkpoint(old, 1, snapshotAt);
    // Made long after the old dedup's snapshot, on the subtask whose clock reads later.
    long made = snapshotAt + Duration.ofMinutes(90).toMillis();
    Click click =
        java.util.stream.IntStream.range(0, 100)
            .mapToObj(i -> at7("x" + i, made))
            .filter(c -> subtaskOf(c.clickId(), 2) == 1)
            .findFirst()
            .orElseThrow();
    List<OperatorSubtaskState> upgraded = new ArrayList<>();
    for (int subtask = 0; subtask < 2; subtask++) {
      long restoredAt = snapshotAt + Duration.ofHours(1 + subtask).toMillis();
      var restored = open(oldState, 2, subtask, restoredAt);
      if (subtask == 1) {
        send(restored, click);
      }
      upgraded.add(checkpoint(restored, 2, restoredAt));
    }

    var again =
        open(
            AbstractStreamOperatorTestHarness.repackageState(
                upgraded.toArray(OperatorSubtaskState[]::new)),
            2,
            1,
            snapshotAt + Duration.ofHours(3).toMillis(),
            2);
    send(again, click);

    assertThat(passed(again)).as("the copy after the second restore").isEmpty();
  }

  @Test
  void anIdIsForgottenATtlOfRunningTimeAfterItWasStoredAndAStopDoesNotCount() throws Exception {
    var first = open(null, 1, 0, 0);
    send(first, at7("a", at(0)));
    OperatorSubtaskState stopped = checkpoint(first, 1, 0);
    long resumedAt = Duration.ofDays(2).toMillis(); // a stop longer than the TTL

    assertThat(copyFound(stopped, resumedAt, TTL.toMillis() - 1_000)).isTrue();
    assertThat(copyFound(stopped, resumedAt, TTL.toMillis() + 1_000)).isFalse();
  }

  /**
   * Whether a copy of the click "a" is dropped after the job resumed from {@code stopped} at {@code
   * resumedAt}, ran for {@code ran} and restarted at once (so that the copy is looked up in state,
   * not on the heap).
   */
  private boolean copyFound(OperatorSubtaskState stopped, long resumedAt, long ran)
      throws Exception {
    var resumed = open(stopped, 1, 0, resumedAt);
    resumed.setStateTtlProcessingTime(resumedAt + ran);
    resumed.setProcessingTime(resumedAt + ran);
    OperatorSubtaskState running = checkpoint(resumed, 2, resumedAt + ran);
    var restarted = open(running, 1, 0, resumedAt + ran);
    send(restarted, at7("a", at(0)));
    return passed(restarted).isEmpty();
  }

  @Test
  void bucketKeysGiveBackTheirMinuteAndSpreadOverHashSlots() {
    java.util.Set<Integer> slots = new java.util.HashSet<>();
    long firstMinute = at(0) / MINUTE;
    for (long minute = firstMinute - 60; minute < firstMinute + 60; minute++) {
      for (int keyGroup = 0; keyGroup < 64; keyGroup++) {
        long key = DropDuplicatesByMinute.bucketKey(minute, keyGroup);
        assertThat(DropDuplicatesByMinute.minuteOf(key)).isEqualTo(minute);
        int hash = Long.hashCode(key);
        slots.add((hash ^ hash >>> 16) & 8191);
      }
    }
    assertThat(slots).as("of 8,192 slots for 7,680 buckets").hasSizeGreaterThan(4_000);
  }

  private static int subtaskOf(UUID id, int parallelism) {
    return org.apache.flink.runtime.state.KeyGroupRangeAssignment.assignKeyToParallelOperator(
        id, MAX_PARALLELISM, parallelism);
  }
}
