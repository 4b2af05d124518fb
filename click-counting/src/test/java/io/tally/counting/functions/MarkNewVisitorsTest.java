package io.tally.counting.functions;

import static io.tally.counting.Clicks.MINUTE;
import static io.tally.counting.Clicks.asBot;
import static io.tally.counting.Clicks.at;
import static io.tally.counting.Clicks.visit;
import static org.assertj.core.api.Assertions.assertThat;

import io.tally.counting.records.Click;
import io.tally.counting.records.VisitorDay;
import io.tally.counting.serde.VisitorDaySerializer;
import java.time.Duration;
import java.util.List;
import org.apache.flink.state.rocksdb.EmbeddedRocksDBStateBackend;
import org.apache.flink.streaming.api.operators.KeyedProcessOperator;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Tests for {@link MarkNewVisitors}, on RocksDB as in production. */
class MarkNewVisitorsTest {

  private static final long HOUR = 60 * MINUTE;
  private static final Duration TTL = MarkNewVisitors.LIVE_TTL;

  private KeyedOneInputStreamOperatorTestHarness<VisitorDay, Click, Click> harness;

  @BeforeEach
  void setUp() throws Exception {
    harness = newHarness();
    harness.open();
  }

  private static KeyedOneInputStreamOperatorTestHarness<VisitorDay, Click, Click> newHarness()
      throws Exception {
    var harness =
        new KeyedOneInputStreamOperatorTestHarness<>(
            new KeyedProcessOperator<>(new MarkNewVisitors(TTL)),
            MarkNewVisitors.KEY,
            VisitorDaySerializer.TYPE);
    harness.setStateBackend(new EmbeddedRocksDBStateBackend());
    harness.setStateTtlProcessingTime(0);
    harness.setProcessingTime(0);
    return harness;
  }

  @AfterEach
  void tearDown() throws Exception {
    harness.close();
  }

  @Test
  void aVisitorsFirstClickIsNewInItsHourAndDayAndLaterOnesAreNot() throws Exception {
    process(visit("1", "abc", at(0), "v1"));
    process(visit("2", "abc", at(10 * MINUTE), "v1"));
    process(visit("3", "abc", at(HOUR), "v1"));
    process(visit("4", "abc", at(HOUR + 1), "v1"));

    assertThat(marks()).containsExactly("hour+day", "-", "hour", "-");
  }

  @Test
  void theHourMarkedIsTheClicksOwnWhateverItsRecordsTimestamp() throws Exception {
    // The click says 10:00, its Kafka record 11:00 (a copy replayed later, or a topic with
    // LogAppendTime): it is marked, as it is counted, in 10:00.
    harness.processElement(visit("1", "abc", at(0), "v1"), at(HOUR));
    harness.processElement(visit("2", "abc", at(MINUTE), "v1"), at(MINUTE));
    harness.processElement(visit("3", "abc", at(HOUR), "v1"), at(HOUR));

    assertThat(marks()).containsExactly("hour+day", "-", "hour");
  }

  @Test
  void aBotsClickWithAVisitorHashPassesUnmarkedAndUsesNoMark() throws Exception {
    process(asBot(visit("1", "abc", at(0), "v1"), "crawler"));
    process(visit("2", "abc", at(MINUTE), "v1"));

    assertThat(marks()).containsExactly("-", "hour+day");
  }

  @Test
  void visitorsAreCountedPerLinkAndPerVisitor() throws Exception {
    process(visit("1", "abc", at(0), "v1"));
    process(visit("2", "xyz", at(0), "v1"));
    process(visit("3", "abc", at(0), "v2"));
    process(visit("4", "abc", at(0), "v2"));

    assertThat(marks()).containsExactly("hour+day", "hour+day", "hour+day", "-");
  }

  @Test
  void theNextUtcDayStartsAfresh() throws Exception {
    long endOfDay = at(0) - Math.floorMod(at(0), 24 * HOUR) + 24 * HOUR - 1;
    process(visit("1", "abc", endOfDay, "v1"));
    process(visit("2", "abc", endOfDay + 1, "v1"));

    assertThat(marks()).containsExactly("hour+day", "hour+day");
  }

  @Test
  void aDaysMarksAreForgottenOnlyAfterTheTtlAndNeedNoTimers() throws Exception {
    long dayEnd = at(0) - Math.floorMod(at(0), 24 * HOUR) + 24 * HOUR;
    process(visit("1", "abc", at(0), "v1"));
    harness.setStateTtlProcessingTime(TTL.toMillis() - 1);
    process(visit("2", "abc", at(MINUTE), "v1"));
    process(visit("3", "abc", dayEnd, "v1")); // the next day: its own entry, written now

    assertThat(harness.numEventTimeTimers() + harness.numProcessingTimeTimers()).isZero();
    harness.setStateTtlProcessingTime(TTL.toMillis() + 1);
    process(visit("4", "abc", at(2 * MINUTE), "v1"));
    process(visit("5", "abc", dayEnd + 1, "v1"));

    assertThat(marks()).containsExactly("hour+day", "-", "hour+day", "hour+day", "-");
  }

  @Test
  void theMarksSurviveASnapshotAndRestore() throws Exception {
    process(visit("1", "abc", at(0), "v1"));
    var snapshot = harness.snapshot(1, 1);
    harness.close();
    harness = newHarness();
    harness.initializeState(snapshot);
    harness.open();

    process(visit("2", "abc", at(MINUTE), "v1"));

    assertThat(marks()).containsExactly("-");
  }

  @Test
  void theTimeTheJobWasStoppedDoesNotCountTowardsTheTtl() throws Exception {
    process(visit("1", "abc", at(0), "v1"));
    long stoppedAt = Duration.ofHours(1).toMillis();
    harness.setProcessingTime(stoppedAt);
    var snapshot = harness.snapshot(1, stoppedAt);
    harness.close();
    harness = newHarness();
    long resumedAt = stoppedAt + TTL.toMillis(); // stopped for longer than the TTL
    harness.setProcessingTime(resumedAt);
    harness.setStateTtlProcessingTime(resumedAt);
    harness.initializeState(snapshot);
    harness.open();

    process(visit("2", "abc", at(MINUTE), "v1"));

    assertThat(marks())
        .as("the visitor of the minute before the stop is no new visitor after it")
        .containsExactly("-");
  }

  @Test
  void countsOneHundredThousandDistinctVisitorsExactly() throws Exception {
    // Unique visitors are exact, not estimated: 150,000 clicks from 100,000 visitors in one hour.
    long hourStart = at(0) - Math.floorMod(at(0), HOUR);
    for (int i = 0; i < 150_000; i++) {
      int visitor = i < 100_000 ? i : i % 100_000;
      process(visit("c" + i, "abc", hourStart + (i % 3_600_000), "visitor-hash-" + visitor));
    }

    long newInHour = harness.extractOutputValues().stream().filter(Click::newVisitorInHour).count();
    long newInDay = harness.extractOutputValues().stream().filter(Click::newVisitorInDay).count();
    assertThat(newInHour).isEqualTo(100_000);
    assertThat(newInDay).isEqualTo(100_000);
  }

  private void process(Click click) throws Exception {
    harness.processElement(click, click.ts());
  }

  private List<String> marks() {
    return harness.extractOutputValues().stream()
        .map(
            c ->
                c.newVisitorInHour()
                    ? (c.newVisitorInDay() ? "hour+day" : "hour")
                    : (c.newVisitorInDay() ? "day" : "-"))
        .toList();
  }
}
