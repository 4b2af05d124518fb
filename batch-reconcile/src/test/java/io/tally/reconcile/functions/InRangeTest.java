package io.tally.reconcile.functions;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.clickjob.Clicks;
import io.tally.clickjob.records.Click;
import io.tally.reconcile.TimeRange;
import java.time.Instant;
import org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness;
import org.apache.flink.streaming.util.ProcessFunctionTestHarnesses;
import org.junit.jupiter.api.Test;

/**
 * Tests for {@link InRange}: the range is tested on the record's event time, the clock clicks are
 * counted by.
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
  void decidesByTheRecordTimestampThatMinutesAreCountedBy() throws Exception {
    // A producer that stamped the record differently from the event's ts: the minute it would be
    // counted in is the record's, so that decides whether the click is in range.
    OneInputStreamOperatorTestHarness<Click, Click> harness = harness();
    harness.processElement(click("inside by ts, outside by record", FROM + 1_000), TO + 1_000);
    harness.processElement(click("outside by ts, inside by record", TO + 1_000), FROM + 1_000);

    assertThat(harness.extractOutputValues())
        .extracting(Click::code)
        .containsExactly("outside by ts, inside by record");
  }

  private static OneInputStreamOperatorTestHarness<Click, Click> harness() throws Exception {
    return ProcessFunctionTestHarnesses.forProcessFunction(
        new InRange(new TimeRange(Instant.ofEpochMilli(FROM), Instant.ofEpochMilli(TO))));
  }

  /** A click on a link named after the case, so that the output shows which cases passed. */
  private static Click click(String code, long ts) {
    return Clicks.click(code, code, ts);
  }
}
