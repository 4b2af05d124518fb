package io.tally.clickjob.functions;

import static io.tally.clickjob.Clicks.T0;
import static io.tally.clickjob.Clicks.at;
import static io.tally.clickjob.Clicks.event;
import static io.tally.clickjob.Clicks.raw;
import static org.assertj.core.api.Assertions.assertThat;

import io.tally.clickjob.records.Click;
import io.tally.clickjob.records.DeadLetter;
import io.tally.event.ClickEvent;
import io.tally.event.MalformedReason;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness;
import org.apache.flink.streaming.util.ProcessFunctionTestHarnesses;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Tests for {@link ParseClicks}. */
class ParseClicksTest {

  private static final String ID = "019ace00-0000-7000-8000-000000000001";

  private OneInputStreamOperatorTestHarness<io.tally.clickjob.records.RawClick, Click> harness;

  @BeforeEach
  void setUp() throws Exception {
    harness = ProcessFunctionTestHarnesses.forProcessFunction(new ParseClicks());
    harness.setProcessingTime(T0.toEpochMilli());
  }

  @Test
  void validClickGoesOnWithOnlyWhatCountingNeeds() throws Exception {
    ClickEvent e = event("abc", at(-1000), true);

    harness.processElement(raw(7, e), at(-1000));

    assertThat(harness.extractOutputValues())
        .containsExactly(new Click(e.clickId().toString(), "abc", at(-1000), true));
    assertThat(harness.getSideOutput(ParseClicks.DEAD_LETTERS)).isNullOrEmpty();
  }

  @Test
  void everyMalformedKindGoesToTheDeadLettersWithItsReasonAndOffset() throws Exception {
    Map<MalformedReason, byte[]> bad =
        Map.of(
            MalformedReason.OVERSIZED, new byte[5000],
            MalformedReason.NOT_JSON, utf8("{not json"),
            MalformedReason.SCHEMA_VERSION, utf8("{\"v\":9,\"click_id\":\"" + ID + "\",\"code\":\"abc\",\"ts\":" + at(0) + "}"),
            MalformedReason.CLICK_ID, utf8("{\"v\":1,\"click_id\":\"nope\",\"code\":\"abc\",\"ts\":" + at(0) + "}"),
            MalformedReason.CODE, utf8("{\"v\":1,\"click_id\":\"" + ID + "\",\"code\":\"a/b\",\"ts\":" + at(0) + "}"),
            MalformedReason.TS, utf8("{\"v\":1,\"click_id\":\"" + ID + "\",\"code\":\"abc\"}"),
            MalformedReason.TS_OUT_OF_RANGE, utf8("{\"v\":1,\"click_id\":\"" + ID + "\",\"code\":\"abc\",\"ts\":" + at(86_400_000) + "}"),
            MalformedReason.FIELD_TYPE, utf8("{\"v\":1,\"click_id\":\"" + ID + "\",\"code\":\"abc\",\"ts\":" + at(0) + ",\"bot\":1}"));
    long offset = 100;
    for (MalformedReason reason : MalformedReason.values()) {
      harness.processElement(raw(offset++, bad.get(reason)), at(0));
    }

    assertThat(harness.extractOutputValues()).isEmpty();
    List<DeadLetter> letters =
        harness.getSideOutput(ParseClicks.DEAD_LETTERS).stream().map(StreamRecord::getValue).collect(Collectors.toList());
    assertThat(letters).extracting(DeadLetter::reason)
        .containsExactly(java.util.Arrays.stream(MalformedReason.values()).map(MalformedReason::label).toArray(String[]::new));
    assertThat(letters).extracting(DeadLetter::offset).containsExactly(100L, 101L, 102L, 103L, 104L, 105L, 106L, 107L);
    assertThat(letters).allSatisfy(l -> {
      assertThat(l.topic()).isEqualTo("clicks");
      assertThat(l.detail()).isNotBlank();
    });
    assertThat(letters.get(1).raw()).isEqualTo(bad.get(MalformedReason.NOT_JSON));
  }

  @Test
  void badRecordsDoNotStopTheGoodOnesAfterThem() throws Exception {
    ClickEvent good = event("abc", at(0), false);

    harness.processElement(raw(1, "garbage"), at(0));
    harness.processElement(raw(2, good), at(0));

    assertThat(harness.extractOutputValues()).hasSize(1);
    assertThat(harness.getSideOutput(ParseClicks.DEAD_LETTERS)).hasSize(1);
  }

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
