package io.tally.reconcile.functions;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.counting.Clicks;
import io.tally.counting.records.Click;
import java.time.Instant;
import org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness;
import org.apache.flink.streaming.util.ProcessFunctionTestHarnesses;
import org.junit.jupiter.api.Test;

/**
 * Tests for {@link InRange}: the range is tested on the click's own time, which both jobs count it
 * by.
 */
class InRangeTest {

  private static final long FROM = 1_764_000_000_000L - 1_764_000_000_000L % 60_000;
  private static final long TO = FROM + 10 * 60_000;

  @Test
  void keepsTheClicksWhoseEventTimeIsInTheHalfOpenRange() throws Exception {
    OneInputStreamOperatorTestHarness<Click, Click> harness = harness();
    harness.processElement(click("before", FROM - 1), FROM - 1);
    harness.processElement(click("first", FROM), FROM);
    harness.processElement(click("last", TO - 1), TO - 1);
    harness.processElement(click("after", TO), TO);

    assertThat(harness.extractOutputValues())
        .extracting(Click::code)
        .containsExactly("first", "last");
  }

  @Test
  void decidesByTheClicksOwnTimeThatMinutesAreCountedBy() throws Exception {
    // A copy replayed later, or a producer that stamped its record otherwise: the click is counted
    // in the minute of its ts, so that decides whether it is in range.
    OneInputStreamOperatorTestHarness<Click, Click> harness = harness();
    harness.processElement(click("inside by ts, outside by record", FROM + 1_000), TO + 1_000);
    harness.processElement(click("outside by ts, inside by record", TO + 1_000), FROM + 1_000);

    assertThat(harness.extractOutputValues())
        .extracting(Click::code)
        .containsExactly("inside by ts, outside by record");
  }

  private static OneInputStreamOperatorTestHarness<Click, Click> harness() throws Exception {
    return ProcessFunctionTestHarnesses.forProcessFunction(
        new InRange(Instant.ofEpochMilli(FROM), Instant.ofEpochMilli(TO)));
  }

  /** A click on a link named after the case, so that the output shows which cases passed. */
  private static Click click(String code, long ts) {
    return Clicks.click(code, code, ts);
  }
}
