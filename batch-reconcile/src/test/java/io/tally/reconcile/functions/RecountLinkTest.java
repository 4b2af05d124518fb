package io.tally.reconcile.functions;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.counting.Clicks;
import io.tally.counting.periods.ClickTally;
import io.tally.counting.records.Click;
import io.tally.counting.records.DimensionCount;
import io.tally.counting.records.MinuteCount;
import io.tally.counting.records.PeriodTotals;
import java.util.List;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.operators.KeyedProcessOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Tests for {@link RecountLink}. The harness runs it as a streaming operator; the final watermark
 * stands for the end of a key's input, where BATCH mode fires the timers.
 */
class RecountLinkTest {

  private static final long MINUTE = 60_000;
  private static final long HOUR = 60 * MINUTE;

  /** An hour boundary that is not a day boundary. */
  private static final long T0 = 1_764_000_000_000L - 1_764_000_000_000L % HOUR;

  private static final long DAY_START = T0 - T0 % (24 * HOUR);

  private KeyedOneInputStreamOperatorTestHarness<String, Click, MinuteCount> harness;

  @BeforeEach
  void setUp() throws Exception {
    harness =
        new KeyedOneInputStreamOperatorTestHarness<>(
            new KeyedProcessOperator<>(new RecountLink(200)), Click::code, Types.STRING);
    harness.open();
  }

  @AfterEach
  void tearDown() throws Exception {
    harness.close();
  }

  @Test
  void countsClicksPerLinkAndMinute() throws Exception {
    click("a", "abc", T0 + 1_000, false);
    click("b", "abc", T0 + 59_999, true);
    click("c", "abc", T0 + MINUTE, false);
    click("d", "xyz", T0 + 5, false);

    harness.processWatermark(Long.MAX_VALUE);

    assertThat(harness.extractOutputValues())
        .containsExactlyInAnyOrder(
            new MinuteCount("abc", T0, 1, 1),
            new MinuteCount("abc", T0 + MINUTE, 1, 0),
            new MinuteCount("xyz", T0, 1, 0));
  }

  @Test
  void countsAClickInTheMinuteOfItsOwnTimeAsTheStreamingJobDoes() throws Exception {
    // A copy replayed a minute later: its record's timestamp is not its time.
    harness.processElement(click("a", "abc", T0 + 10, false, ""), T0 + MINUTE + 10);

    harness.processWatermark(Long.MAX_VALUE);

    assertThat(harness.extractOutputValues()).containsExactly(new MinuteCount("abc", T0, 1, 0));
  }

  @Test
  void countsHoursDaysUniqueVisitorsAndBreakdownsFromTheMarks() throws Exception {
    visit("a", T0 + 1_000, true, true);
    visit("b", T0 + MINUTE, false, false); // same visitor, same hour
    visit("c", T0 + 2 * MINUTE, true, true);
    visit("d", T0 + HOUR, true, false); // same visitor, next hour, same day
    click("e", "abc", T0 + 5, true);

    harness.processWatermark(Long.MAX_VALUE);

    assertThat(side(RecountLink.HOURS))
        .containsExactlyInAnyOrder(
            new PeriodTotals("abc", T0, 3, 1, 2), new PeriodTotals("abc", T0 + HOUR, 1, 0, 1));
    assertThat(side(RecountLink.DAYS)).containsExactly(new PeriodTotals("abc", DAY_START, 4, 1, 2));
    assertThat(side(RecountLink.DIMENSIONS))
        .contains(
            new DimensionCount("abc", T0, ClickTally.COUNTRY, "DE", 3),
            new DimensionCount("abc", T0, ClickTally.BOT_KIND, "crawler", 1),
            new DimensionCount("abc", T0 + HOUR, ClickTally.BROWSER, "Chrome", 1));
  }

  private <T> List<T> side(org.apache.flink.util.OutputTag<T> tag) {
    return harness.getSideOutput(tag).stream().map(StreamRecord::getValue).toList();
  }

  private void visit(String id, long ts, boolean newInHour, boolean newInDay) throws Exception {
    harness.processElement(
        click(id, "abc", ts, false, "v").withNewVisitor(newInHour, newInDay), ts);
  }

  private void click(String id, String code, long ts, boolean bot) throws Exception {
    harness.processElement(click(id, code, ts, bot, ""), ts);
  }

  private static Click click(String id, String code, long ts, boolean bot, String visitor) {
    return bot ? Clicks.botClick(id, code, ts) : Clicks.visit(id, code, ts, visitor);
  }
}
