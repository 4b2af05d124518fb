package io.tally.counting.functions;

import static io.tally.counting.Clicks.MINUTE;
import static io.tally.counting.Clicks.at;
import static io.tally.counting.Clicks.botClick;
import static io.tally.counting.Clicks.click;
import static io.tally.counting.Clicks.id;
import static io.tally.counting.Clicks.visit;
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
import org.apache.flink.streaming.util.AbstractStreamOperatorTestHarness;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Tests for {@link DropDuplicateClicks}, the earlier dedup whose state upgrades start from, on
 * RocksDB as in production.
 */
class DropDuplicateClicksTest {

  private static final Duration TTL = Duration.ofHours(24);

  private KeyedOneInputStreamOperatorTestHarness<UUID, Click, Click> harness;

  @BeforeEach
  void setUp() throws Exception {
    harness = harness(Optional.of(TTL));
    harness.open();
  }

  private static KeyedOneInputStreamOperatorTestHarness<UUID, Click, Click> harness(
      Optional<Duration> ttl) throws Exception {
    return harness(ttl, 1, 0);
  }

  private static KeyedOneInputStreamOperatorTestHarness<UUID, Click, Click> harness(
      Optional<Duration> ttl, int parallelism, int subtask) throws Exception {
    var harness =
        new KeyedOneInputStreamOperatorTestHarness<>(
            DropDuplicateClicks.operator(ttl, Duration.ofMinutes(2)),
            DropDuplicatesByMinute.BY_CLICK_ID,
            ClickIdSerializer.TYPE,
            128,
            parallelism,
            subtask);
    harness.setStateBackend(new EmbeddedRocksDBStateBackend());
    wallClock(harness, 0);
    return harness;
  }

  /** Sets the wall clock that state TTL and the operator read alike, as a running job's do. */
  private static void wallClock(
      KeyedOneInputStreamOperatorTestHarness<UUID, Click, Click> harness, long millis)
      throws Exception {
    harness.setStateTtlProcessingTime(millis);
    harness.setProcessingTime(millis);
  }

  /** Stops the job with a snapshot at {@code stoppedAt} and restores it at {@code resumedAt}. */
  private void stopAndResume(long stoppedAt, long resumedAt) throws Exception {
    wallClock(harness, stoppedAt);
    var snapshot = harness.snapshot(1, stoppedAt);
    harness.close();
    harness = harness(Optional.of(TTL));
    wallClock(harness, resumedAt);
    harness.initializeState(snapshot);
    harness.open();
  }

  @AfterEach
  void tearDown() throws Exception {
    harness.close();
  }

  @Test
  void letsEachClickIdThroughOnce() throws Exception {
    harness.processElement(click("a", "abc", at(0)), at(0));
    harness.processElement(click("b", "abc", at(1)), at(1));
    harness.processElement(click("a", "abc", at(2)), at(2));
    harness.processElement(click("a", "abc", at(3)), at(3));

    assertThat(harness.extractOutputValues())
        .extracting(Click::clickId)
        .containsExactly(id("a"), id("b"));
    assertThat(harness.getSideOutput(DropDuplicatesByMinute.DUPLICATES))
        .as("each copy dropped, for the ledger")
        .extracting(record -> record.getValue().clickId())
        .containsExactly(id("a"), id("a"));
  }

  @Test
  void aFirstCopyPastItsMinutesLatenessGoesToTheLateOutputOnce() throws Exception {
    harness.processWatermark(at(3 * MINUTE - 1)); // minute 0 is closed for good, minute 1 is not
    harness.processElement(click("late", "abc", at(1_000)), at(1_000));
    harness.processElement(click("late", "abc", at(1_000)), at(1_000)); // its copy
    harness.processElement(click("on-time", "abc", at(MINUTE + 1_000)), at(MINUTE + 1_000));

    assertOnlyOnTimeCountedAndLateDeadLettered();
  }

  @Test
  void aLateCopyOfACountedClickIsOnlyADuplicate() throws Exception {
    harness.processElement(click("a", "abc", at(1_000)), at(1_000));
    harness.processWatermark(at(3 * MINUTE - 1));
    harness.processElement(click("a", "abc", at(1_000)), at(1_000));

    assertThat(harness.extractOutputValues()).extracting(Click::clickId).containsExactly(id("a"));
    assertThat(harness.getSideOutput(DropDuplicatesByMinute.LATE)).isNullOrEmpty();
  }

  @Test
  void lateIsJudgedByTheClicksOwnTimeNotItsRecords() throws Exception {
    harness.processWatermark(at(3 * MINUTE - 1));
    // A copy replayed now: its record says now, the click says minute 0.
    harness.processElement(click("replayed", "abc", at(1_000)), at(3 * MINUTE));

    assertThat(harness.extractOutputValues()).isEmpty();
    assertThat(harness.getSideOutput(DropDuplicatesByMinute.LATE)).hasSize(1);
  }

  @Test
  void aCopyMeetsItsOriginalWhateverAClassifierSaidOfEither() throws Exception {
    // The original was counted as a person's visit; a later classifier calls its replayed copy a
    // bot.
    harness.processElement(visit("a", "abc", at(0), "visitor-1"), at(0));
    harness.processElement(botClick("a", "abc", at(0)), at(0));

    assertThat(harness.extractOutputValues()).hasSize(1);
    assertThat(DropDuplicatesByMinute.BY_CLICK_ID.getKey(visit("a", "abc", at(0), "visitor-1")))
        .isEqualTo(DropDuplicatesByMinute.BY_CLICK_ID.getKey(botClick("a", "xyz", at(9))));
  }

  @Test
  void remembersAClickIdForTheTtlAndForgetsItAfter() throws Exception {
    harness.processElement(click("a", "abc", at(0)), at(0));

    harness.setStateTtlProcessingTime(TTL.toMillis() - 1);
    harness.processElement(click("a", "abc", at(1)), at(1));
    assertThat(harness.extractOutputValues()).hasSize(1);

    harness.setStateTtlProcessingTime(TTL.toMillis() + 1);
    harness.processElement(click("a", "abc", at(2)), at(2));
    assertThat(harness.extractOutputValues())
        .as("a copy redelivered after the TTL is no longer recognised: the TTL bounds the promise")
        .hasSize(2);
  }

  @Test
  void theTimeTheJobWasStoppedDoesNotCountTowardsTheTtl() throws Exception {
    harness.processElement(click("a", "abc", at(0)), at(0));
    long stoppedAt = TTL.toMillis() / 2;
    long resumedAt = stoppedAt + Duration.ofDays(2).toMillis(); // a weekend, longer than the TTL
    stopAndResume(stoppedAt, resumedAt);

    harness.processElement(click("a", "abc", at(1)), at(1));
    assertThat(harness.extractOutputValues())
        .as("a copy of a click from before the stop, redelivered after it, is a duplicate")
        .isEmpty();

    wallClock(harness, resumedAt + TTL.toMillis() / 2 + 1);
    harness.processElement(click("a", "abc", at(2)), at(2));
    assertThat(harness.extractOutputValues())
        .as("after a TTL of the job's running time it is forgotten as before")
        .hasSize(1);
  }

  @Test
  void aStopIsForgottenOnceTheJobHasRunATtlSinceAndNewIdsLiveTheirTtl() throws Exception {
    long day = Duration.ofDays(1).toMillis();
    stopAndResume(day, 3 * day); // stopped for two days
    stopAndResume(5 * day, 5 * day + 1); // two days of running later, a restart
    harness.processElement(click("b", "abc", at(0)), at(0));

    wallClock(harness, 5 * day + 1 + TTL.toMillis() + 1);
    harness.processElement(click("b", "abc", at(1)), at(1));
    assertThat(harness.extractOutputValues())
        .as("no entry from before the first stop can be alive: its two days are not added")
        .hasSize(2);
  }

  @Test
  void aStopCountsOnceWhateverTheParallelism() throws Exception {
    long day = Duration.ofDays(1).toMillis();
    long hour = Duration.ofHours(1).toMillis();
    harness.close();
    List<OperatorSubtaskState> snapshots = new ArrayList<>();
    for (int subtask = 0; subtask < 2; subtask++) {
      var running = harness(Optional.of(TTL), 2, subtask);
      running.open();
      snapshots.add(running.snapshot(1, 0));
      running.close();
    }
    // Stopped for a day; the two subtasks resume a few milliseconds apart, run an hour, and the
    // job restarts at once on one subtask.
    OperatorSubtaskState stopped =
        AbstractStreamOperatorTestHarness.repackageState(
            snapshots.toArray(OperatorSubtaskState[]::new));
    snapshots.clear();
    for (int subtask = 0; subtask < 2; subtask++) {
      var resumed = harness(Optional.of(TTL), 2, subtask);
      wallClock(resumed, day + 5 * subtask);
      resumed.initializeState(
          AbstractStreamOperatorTestHarness.repartitionOperatorState(stopped, 128, 2, 2, subtask));
      resumed.open();
      wallClock(resumed, day + hour);
      snapshots.add(resumed.snapshot(2, day + hour));
      resumed.close();
    }
    harness = harness(Optional.of(TTL));
    wallClock(harness, day + hour + 1);
    harness.initializeState(
        AbstractStreamOperatorTestHarness.repartitionOperatorState(
            AbstractStreamOperatorTestHarness.repackageState(
                snapshots.toArray(OperatorSubtaskState[]::new)),
            128,
            2,
            1,
            0));
    harness.open();
    harness.processElement(click("a", "abc", at(0)), at(0));

    wallClock(harness, day + hour + 1 + TTL.toMillis() + day + 1_000);
    harness.processElement(click("a", "abc", at(1)), at(1));
    assertThat(harness.extractOutputValues())
        .as("forgotten a TTL and one day's stop after it was written, not two")
        .hasSize(2);
  }

  @Test
  void rightAfterARestoreLatenessIsJudgedAgainstTheWatermarkOfTheSnapshot() throws Exception {
    harness.processWatermark(at(3 * MINUTE - 1)); // minute 0 is closed for good
    stopAndResume(1, 2);

    // Until the sources send watermarks again, the operator's own is Long.MIN_VALUE.
    harness.processElement(click("late", "abc", at(1_000)), at(1_000));
    harness.processElement(click("on-time", "abc", at(MINUTE + 1_000)), at(MINUTE + 1_000));

    assertOnlyOnTimeCountedAndLateDeadLettered();
  }

  @Test
  void afterARescaleEverySubtaskJudgesFromTheLeastWatermarkBefore() throws Exception {
    harness.close();
    harness = harness(Optional.of(TTL), 2, 0);
    harness.open();
    var other = harness(Optional.of(TTL), 2, 1);
    other.open();
    harness.processWatermark(at(4 * MINUTE - 1)); // minutes 0 and 1 are closed here
    other.processWatermark(at(3 * MINUTE - 1)); // only minute 0 here
    var merged =
        AbstractStreamOperatorTestHarness.repackageState(
            harness.snapshot(1, 1), other.snapshot(1, 1));
    other.close();
    harness.close();
    harness = harness(Optional.of(TTL));
    harness.initializeState(
        AbstractStreamOperatorTestHarness.repartitionOperatorState(merged, 128, 2, 1, 0));
    harness.open();

    harness.processElement(click("late", "abc", at(1_000)), at(1_000));
    harness.processElement(click("on-time", "abc", at(MINUTE + 1_000)), at(MINUTE + 1_000));

    // Minute 1 was still open on the slower subtask.
    assertOnlyOnTimeCountedAndLateDeadLettered();
  }

  /** The click {@code on-time} went on, the click {@code late} to the late output, once each. */
  private void assertOnlyOnTimeCountedAndLateDeadLettered() {
    assertThat(harness.extractOutputValues())
        .extracting(Click::clickId)
        .containsExactly(id("on-time"));
    assertThat(harness.getSideOutput(DropDuplicatesByMinute.LATE))
        .extracting(r -> r.getValue().clickId())
        .containsExactly(id("late"));
  }

  @Test
  void overABoundedInputNothingIsForgotten() throws Exception {
    var whole = harness(Optional.empty());
    whole.open();
    whole.processElement(click("a", "abc", at(0)), at(0));
    whole.setStateTtlProcessingTime(Duration.ofDays(365).toMillis());
    whole.processElement(click("a", "abc", at(1)), at(1));

    assertThat(whole.extractOutputValues()).hasSize(1);
    whole.close();
  }

  @Test
  void theRememberedIdsSurviveASnapshotAndRestore() throws Exception {
    harness.processElement(click("a", "abc", at(0)), at(0));
    var snapshot = harness.snapshot(1, 1);
    harness.close();
    harness = harness(Optional.of(TTL));
    harness.initializeState(snapshot);
    harness.open();

    harness.processElement(click("a", "abc", at(1)), at(1));
    harness.processElement(click("b", "abc", at(1)), at(1));

    assertThat(harness.extractOutputValues()).extracting(Click::clickId).containsExactly(id("b"));
  }
}
