package io.tally.clickjob.functions;

import static io.tally.clickjob.Clicks.MINUTE;
import static io.tally.clickjob.Clicks.at;
import static io.tally.clickjob.Clicks.botClick;
import static io.tally.clickjob.Clicks.visit;
import static org.assertj.core.api.Assertions.assertThat;

import io.tally.clickjob.records.Click;
import io.tally.clickjob.records.ClickTally;
import io.tally.clickjob.records.DimensionCount;
import io.tally.clickjob.records.MinuteCount;
import io.tally.clickjob.records.MinuteTotals;
import io.tally.clickjob.records.PeriodTotals;
import java.time.Duration;
import java.util.List;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.operators.KeyedProcessOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.util.OutputTag;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Tests for {@link RollUpHoursAndDays}. On the heap state backend, which can count its entries; the job's
 * ITCase runs it on RocksDB.
 */
class RollUpHoursAndDaysTest {

  private static final long HOUR = 60 * MINUTE;
  private static final long HOUR_START = at(0) - Math.floorMod(at(0), HOUR);
  private static final long DAY_START = at(0) - Math.floorMod(at(0), 24 * HOUR);

  private KeyedOneInputStreamOperatorTestHarness<String, MinuteTotals, MinuteCount> harness;

  @BeforeEach
  void setUp() throws Exception {
    harness = new KeyedOneInputStreamOperatorTestHarness<>(
        new KeyedProcessOperator<>(new RollUpHoursAndDays(Duration.ofMinutes(1), Duration.ofMinutes(2), Duration.ofSeconds(2))),
        MinuteTotals::code, Types.STRING);
    harness.setProcessingTime(1);
    harness.open();
  }

  @AfterEach
  void tearDown() throws Exception {
    harness.close();
  }

  @Test
  void anHourIsTheSumOfItsMinutesLatestTotalsHoweverOftenEachFired() throws Exception {
    Click a = visit("1", "abc", at(0), "v1").withNewVisitor(true, true);
    Click b = visit("2", "abc", at(1000), "v2").withNewVisitor(true, true);
    Click c = visit("3", "abc", at(MINUTE), "v1");
    fire(at(0), a);
    fire(at(0), a, b); // the minute fired again with one more click
    fire(at(0), a, b); // and again with nothing new
    fire(at(MINUTE), c);

    assertThat(harness.extractOutputValues()).extracting(MinuteCount::clicks).containsExactly(1L, 2L, 2L, 1L);
    assertThat(all(RollUpHoursAndDays.HOURS)).as("written at the next flush boundary, not per firing").isEmpty();
    harness.setProcessingTime(2_000);
    assertThat(all(RollUpHoursAndDays.HOURS)).containsExactly(new PeriodTotals("abc", HOUR_START, 3, 0, 2));
    assertThat(all(RollUpHoursAndDays.DAYS)).containsExactly(new PeriodTotals("abc", DAY_START, 3, 0, 2));

    fire(at(2 * MINUTE), visit("4", "abc", at(2 * MINUTE), "v3").withNewVisitor(true, true));
    harness.setProcessingTime(4_000);
    assertThat(last(RollUpHoursAndDays.HOURS)).isEqualTo(new PeriodTotals("abc", HOUR_START, 4, 0, 3));
    harness.setProcessingTime(6_000);
    assertThat(all(RollUpHoursAndDays.HOURS)).as("nothing changed, nothing written").hasSize(2);
  }

  @Test
  void aBacklogsHoursAreWrittenEveryThirtySecondsNotEveryFewSeconds() throws Exception {
    long wallClock = at(0) + 24 * HOUR + 1_000; // a day after the clicks, between two flush boundaries
    harness.setProcessingTime(wallClock);
    fire(at(0), visit("1", "abc", at(0), "v1").withNewVisitor(true, true));
    long flushAt = wallClock - Math.floorMod(wallClock, 30_000) + 30_000;

    harness.setProcessingTime(flushAt - 1);
    assertThat(all(RollUpHoursAndDays.HOURS)).isEmpty();
    harness.setProcessingTime(flushAt);
    assertThat(all(RollUpHoursAndDays.HOURS)).containsExactly(new PeriodTotals("abc", HOUR_START, 1, 0, 1));
  }

  @Test
  void aMinuteThatStartsOverWithoutItsWindowStateAddsItsNewClicksInsteadOfSubtracting() throws Exception {
    fire(at(0), visit("1", "abc", at(0), "v1"), visit("2", "abc", at(1), "v2"));
    fire(at(0), visit("3", "abc", at(2), "v3")); // the window lost its state: it counts only what came since

    harness.setProcessingTime(2_000);

    assertThat(all(RollUpHoursAndDays.HOURS)).containsExactly(new PeriodTotals("abc", HOUR_START, 3, 0, 0));
  }

  @Test
  void dimensionRowsCarryTheHoursTotalOfEveryChangedValue() throws Exception {
    fire(at(0), visit("1", "abc", at(0), "v1"), botClick("2", "abc", at(0)));
    harness.setProcessingTime(2_000);
    fire(at(MINUTE), visit("3", "abc", at(MINUTE), "v1"));
    harness.setProcessingTime(4_000);

    List<DimensionCount> rows = all(RollUpHoursAndDays.DIMENSIONS);
    assertThat(rows).contains(
        new DimensionCount("abc", HOUR_START, ClickTally.COUNTRY, "DE", 1),
        new DimensionCount("abc", HOUR_START, ClickTally.BOT_KIND, "crawler", 1),
        new DimensionCount("abc", HOUR_START, ClickTally.COUNTRY, "DE", 2),
        new DimensionCount("abc", HOUR_START, ClickTally.BROWSER, "Chrome", 2));
    assertThat(rows.stream().filter(r -> r.dimension().equals(ClickTally.BOT_KIND))).hasSize(1);
  }

  @Test
  void minutesOfTwoHoursGoToTwoHourRowsAndOneDayRow() throws Exception {
    fire(HOUR_START + HOUR - MINUTE, visit("1", "abc", HOUR_START + HOUR - 1, "v1").withNewVisitor(true, true));
    fire(HOUR_START + HOUR, visit("2", "abc", HOUR_START + HOUR, "v1").withNewVisitor(true, false));
    harness.setProcessingTime(2_000);

    assertThat(all(RollUpHoursAndDays.HOURS)).containsExactlyInAnyOrder(
        new PeriodTotals("abc", HOUR_START, 1, 0, 1), new PeriodTotals("abc", HOUR_START + HOUR, 1, 0, 1));
    assertThat(last(RollUpHoursAndDays.DAYS)).isEqualTo(new PeriodTotals("abc", DAY_START, 2, 0, 1));
  }

  @Test
  void stateIsDroppedOnceTheLastLateFiringOfTheDayCanNoLongerComeAfterItsRowsAreWritten() throws Exception {
    fire(at(0), visit("1", "abc", at(0), "v1"));
    harness.processWatermark(HOUR_START + HOUR + 2 * MINUTE);
    assertThat(all(RollUpHoursAndDays.HOURS)).as("an hour about to be dropped is written first")
        .containsExactly(new PeriodTotals("abc", HOUR_START, 1, 0, 0));
    assertThat(all(RollUpHoursAndDays.DAYS)).as("the day is still open: written at the flush").isEmpty();
    assertThat(harness.numKeyedStateEntries()).isPositive();

    harness.processWatermark(DAY_START + 24 * HOUR + 2 * MINUTE);

    assertThat(all(RollUpHoursAndDays.DAYS)).containsExactly(new PeriodTotals("abc", DAY_START, 1, 0, 0));
    assertThat(harness.numKeyedStateEntries()).isZero();
  }

  @Test
  void aDayKeepsOnlyItsTotalsInStateSinceOnlyHoursAreWrittenWithBreakdowns() throws Exception {
    fire(at(0), visit("1", "abc", at(0), "v1").withNewVisitor(true, true), botClick("2", "abc", at(1)));
    fire(at(MINUTE), visit("3", "abc", at(MINUTE), "v2").withNewVisitor(true, true));

    ClickTally day = state("day-totals").get(DAY_START);
    assertThat(List.of(day.clicks, day.botClicks, day.dayVisitors)).containsExactly(2L, 1L, 2L);
    assertThat(day.size).as("dimension values kept for the day").isZero();
    assertThat(state("hour-totals").get(HOUR_START).size).as("the hour keeps its breakdowns").isPositive();
  }

  private org.apache.flink.api.common.state.MapState<Long, ClickTally> state(String name) throws Exception {
    var backend = ((org.apache.flink.streaming.api.operators.AbstractStreamOperator<?>) harness.getOperator())
        .<String>getKeyedStateBackend();
    backend.setCurrentKey("abc");
    return backend.getPartitionedState(
        org.apache.flink.runtime.state.VoidNamespace.INSTANCE,
        org.apache.flink.runtime.state.VoidNamespaceSerializer.INSTANCE,
        new org.apache.flink.api.common.state.MapStateDescriptor<>(name, Types.LONG,
            org.apache.flink.api.common.typeinfo.TypeInformation.of(ClickTally.class)));
  }

  private void fire(long minuteStart, Click... clicks) throws Exception {
    ClickTally tally = new ClickTally();
    for (Click click : clicks) {
      tally.add(click);
    }
    harness.processElement(new MinuteTotals("abc", minuteStart, tally), minuteStart);
  }

  private <T> List<T> all(OutputTag<T> tag) {
    var output = harness.getSideOutput(tag);
    return output == null ? List.of() : output.stream().map(StreamRecord::getValue).toList();
  }

  private <T> T last(OutputTag<T> tag) {
    List<T> all = all(tag);
    return all.get(all.size() - 1);
  }
}
