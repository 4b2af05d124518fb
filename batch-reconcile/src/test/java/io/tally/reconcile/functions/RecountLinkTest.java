package io.tally.reconcile.functions;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.clickjob.records.Click;
import io.tally.clickjob.records.MinuteCount;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.operators.KeyedProcessOperator;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Tests for {@link RecountLink}. The harness runs it as a streaming operator; the final watermark stands
 * for the end of a key's input, where BATCH mode fires the timers.
 */
class RecountLinkTest {

  private static final long MINUTE = 60_000;
  private static final long T0 = 1_764_000_000_000L - 1_764_000_000_000L % MINUTE;

  private KeyedOneInputStreamOperatorTestHarness<String, Click, MinuteCount> harness;

  @BeforeEach
  void setUp() throws Exception {
    harness = new KeyedOneInputStreamOperatorTestHarness<>(
        new KeyedProcessOperator<>(new RecountLink(MINUTE)), Click::code, Types.STRING);
    harness.open();
  }

  @AfterEach
  void tearDown() throws Exception {
    harness.close();
  }

  @Test
  void countsEachClickIdOncePerLinkAndMinute() throws Exception {
    click("a", "abc", T0 + 1_000, false);
    click("b", "abc", T0 + 59_999, true);
    click("a", "abc", T0 + 1_000, false);
    click("c", "abc", T0 + MINUTE, false);
    click("d", "xyz", T0 + 5, false);
    click("b", "abc", T0 + 59_999, true);

    harness.processWatermark(Long.MAX_VALUE);

    assertThat(harness.extractOutputValues()).containsExactlyInAnyOrder(
        new MinuteCount("abc", T0, 1, 1),
        new MinuteCount("abc", T0 + MINUTE, 1, 0),
        new MinuteCount("xyz", T0, 1, 0));
  }

  @Test
  void aRepeatedIdIsDroppedEvenWhenItsCopyLandsInAnotherMinute() throws Exception {
    // The dedup is per link, like the streaming job's, not per window.
    click("a", "abc", T0, false);
    click("a", "abc", T0 + MINUTE, false);

    harness.processWatermark(Long.MAX_VALUE);

    assertThat(harness.extractOutputValues()).containsExactly(new MinuteCount("abc", T0, 1, 0));
  }

  @Test
  void windowsFollowTheRecordTimestampAsTheStreamingWindowsDo() throws Exception {
    harness.processElement(new Click("a", "abc", T0 + 10, false), T0 + MINUTE + 10);

    harness.processWatermark(Long.MAX_VALUE);

    assertThat(harness.extractOutputValues()).containsExactly(new MinuteCount("abc", T0 + MINUTE, 1, 0));
  }

  private void click(String id, String code, long ts, boolean bot) throws Exception {
    harness.processElement(new Click(id, code, ts, bot), ts);
  }
}
