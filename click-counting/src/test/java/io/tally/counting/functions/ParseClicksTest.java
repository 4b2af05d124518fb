package io.tally.counting.functions;

import static io.tally.counting.Clicks.T0;
import static io.tally.counting.Clicks.at;
import static io.tally.counting.Clicks.event;
import static io.tally.counting.Clicks.raw;
import static org.assertj.core.api.Assertions.assertThat;

import io.tally.counting.records.Click;
import io.tally.counting.records.DeadLetter;
import io.tally.counting.records.RawClick;
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
  private static final String FIREFOX_LINUX =
      "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0";

  private OneInputStreamOperatorTestHarness<io.tally.counting.records.RawClick, Click> harness;

  @BeforeEach
  void setUp() throws Exception {
    harness = ProcessFunctionTestHarnesses.forProcessFunction(new ParseClicks());
    harness.setProcessingTime(T0.toEpochMilli());
  }

  @Test
  void aValidClickGoesOnWithItsUserAgentClassified() throws Exception {
    ClickEvent e =
        ClickEvent.builder(java.util.UUID.fromString(ID), "abc", at(-1000))
            .visitor("AAECAwQFBgcICQoLDA0ODw")
            .userAgent(FIREFOX_LINUX)
            .referrerDomain("news.example")
            .country("DE")
            .campaign(new ClickEvent.Campaign("newsletter", "email", ""))
            .build();

    harness.processElement(raw(7, e), at(-1000));

    assertThat(harness.extractOutputValues())
        .containsExactly(
            new Click(
                java.util.UUID.fromString(ID),
                "abc",
                at(-1000),
                "",
                "AAECAwQFBgcICQoLDA0ODw",
                ClickEvent.NO_RANGE_VISITOR,
                "DE",
                "news.example",
                "Firefox",
                "Linux",
                "desktop",
                false,
                false,
                "newsletter",
                "email",
                ""));
    assertThat(harness.getSideOutput(ParseClicks.DEAD_LETTERS)).isNullOrEmpty();
  }

  @Test
  void anAgentWithOneOfTheUsersCrawlerFragmentsIsACrawlerButAHeadRequestStaysOne()
      throws Exception {
    var own =
        ProcessFunctionTestHarnesses.forProcessFunction(new ParseClicks(List.of("gecko/20100101")));
    for (boolean head : new boolean[] {false, true}) {
      ClickEvent e =
          ClickEvent.builder(java.util.UUID.randomUUID(), "abc", at(-1000))
              .visitor("AAECAwQFBgcICQoLDA0ODw")
              .userAgent(FIREFOX_LINUX)
              .country("DE")
              .head(head)
              .build();
      own.processElement(raw(7, e), at(-1000));
    }

    assertThat(own.extractOutputValues())
        .extracting(Click::botKind)
        .containsExactly("crawler", "head");
  }

  @Test
  void aHeadRequestIsABotClickOfKindHead() throws Exception {
    ClickEvent e =
        ClickEvent.builder(java.util.UUID.fromString(ID), "abc", at(0))
            .userAgent(FIREFOX_LINUX)
            .head(true)
            .build();

    harness.processElement(raw(1, e), at(0));

    assertThat(harness.extractOutputValues())
        .singleElement()
        .satisfies(
            c -> {
              assertThat(c.bot()).isTrue();
              assertThat(c.botKind()).isEqualTo("head");
            });
  }

  @Test
  void aBurstsClickIsABotClickOfKindBurstWhateverItsAgentButAHeadStaysAHead() throws Exception {
    for (boolean head : new boolean[] {false, true}) {
      ClickEvent e =
          ClickEvent.builder(java.util.UUID.fromString(ID), "abc", at(0))
              .visitor("AAECAwQFBgcICQoLDA0ODw")
              .userAgent(FIREFOX_LINUX)
              .referrerDomain("news.example")
              .country("DE")
              .head(head)
              .burst(true)
              .build();
      harness.processElement(raw(1, e), at(0));
    }

    assertThat(harness.extractOutputValues())
        .extracting(Click::botKind, Click::browser, Click::device)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple("burst", "Other", "bot"),
            org.assertj.core.groups.Tuple.tuple("head", "Other", "bot"));
  }

  @Test
  void aVersion1EventKeepsItsOwnClassification() throws Exception {
    String v1 =
        "{\"v\":1,\"click_id\":\""
            + ID
            + "\",\"code\":\"abc\",\"ts\":"
            + at(0)
            + ",\"ip_hash\":\"AAECAwQFBgcICQoLDA0ODw\",\"ua_family\":\"Googlebot\",\"device\":\"Spider\",\"referrer_domain\":\"\","
            + "\"country\":\"US\",\"bot\":true}";
    String v1Human =
        v1.replace(ID, "019ace00-0000-7000-8000-000000000002")
            .replace("\"bot\":true", "\"bot\":false");

    harness.processElement(raw(1, v1), at(0));
    harness.processElement(raw(2, v1Human), at(0));

    assertThat(harness.extractOutputValues())
        .containsExactly(
            new Click(
                java.util.UUID.fromString(ID),
                "abc",
                at(0),
                io.tally.counting.classify.UserAgentFacts.V1_BOT_KIND,
                "AAECAwQFBgcICQoLDA0ODw",
                ClickEvent.NO_RANGE_VISITOR,
                "US",
                "",
                "Googlebot",
                "Other",
                "bot",
                false,
                false),
            new Click(
                java.util.UUID.fromString("019ace00-0000-7000-8000-000000000002"),
                "abc",
                at(0),
                "",
                "AAECAwQFBgcICQoLDA0ODw",
                ClickEvent.NO_RANGE_VISITOR,
                "US",
                "",
                "Googlebot",
                "Other",
                "other",
                false,
                false));
  }

  @Test
  void everyMalformedKindGoesToTheDeadLettersWithItsReasonAndOffset() throws Exception {
    Map<MalformedReason, byte[]> bad =
        Map.of(
            MalformedReason.OVERSIZED, new byte[5000],
            MalformedReason.NOT_JSON, utf8("{not json"),
            MalformedReason.SCHEMA_VERSION,
                utf8("{\"v\":9,\"click_id\":\"" + ID + "\",\"code\":\"abc\",\"ts\":" + at(0) + "}"),
            MalformedReason.CLICK_ID,
                utf8("{\"v\":1,\"click_id\":\"nope\",\"code\":\"abc\",\"ts\":" + at(0) + "}"),
            MalformedReason.CODE,
                utf8("{\"v\":1,\"click_id\":\"" + ID + "\",\"code\":\"a/b\",\"ts\":" + at(0) + "}"),
            MalformedReason.TS, utf8("{\"v\":1,\"click_id\":\"" + ID + "\",\"code\":\"abc\"}"),
            MalformedReason.TS_OUT_OF_RANGE,
                utf8(
                    "{\"v\":1,\"click_id\":\""
                        + ID
                        + "\",\"code\":\"abc\",\"ts\":"
                        + at(86_400_000)
                        + "}"),
            MalformedReason.FIELD_TYPE,
                utf8(
                    "{\"v\":1,\"click_id\":\""
                        + ID
                        + "\",\"code\":\"abc\",\"ts\":"
                        + at(0)
                        + ",\"bot\":1}"),
            MalformedReason.FIELD_VALUE,
                utf8(
                    "{\"v\":2,\"click_id\":\""
                        + ID
                        + "\",\"code\":\"abc\",\"ts\":"
                        + at(0)
                        + ",\"referrer_domain\":\"a\\u0000.example\"}"));
    long offset = 100;
    for (MalformedReason reason : MalformedReason.values()) {
      harness.processElement(raw(offset++, bad.get(reason)), at(0));
    }

    assertThat(harness.extractOutputValues()).isEmpty();
    List<DeadLetter> letters =
        harness.getSideOutput(ParseClicks.DEAD_LETTERS).stream()
            .map(StreamRecord::getValue)
            .collect(Collectors.toList());
    assertThat(letters)
        .extracting(DeadLetter::reason)
        .containsExactly(
            java.util.Arrays.stream(MalformedReason.values())
                .map(MalformedReason::label)
                .toArray(String[]::new));
    assertThat(letters)
        .extracting(DeadLetter::offset)
        .containsExactly(100L, 101L, 102L, 103L, 104L, 105L, 106L, 107L, 108L);
    assertThat(letters)
        .allSatisfy(
            l -> {
              assertThat(l.topic()).isEqualTo("clicks");
              assertThat(l.detail()).isNotBlank();
            });
    assertThat(letters.get(1).raw()).isEqualTo(bad.get(MalformedReason.NOT_JSON));
  }

  @Test
  void aRecordIsJudgedByItselfNotByWhenItIsRead() throws Exception {
    // Stamped two hours ahead of the job's clock by a host whose clock runs fast: its record
    // carries the same time, which the broker accepted, so it is valid now and on any later read.
    ClickEvent ahead = event("abc", at(7_200_000), false);
    // Two hours ahead of the record it came in: refused now and on any later read.
    RawClick farAhead =
        raw(
            2,
            utf8(
                "{\"v\":2,\"click_id\":\""
                    + ID
                    + "\",\"code\":\"abc\",\"ts\":"
                    + at(7_200_000)
                    + "}"));

    harness.processElement(raw(1, ahead), at(0));
    harness.processElement(farAhead, at(0));
    harness.setProcessingTime(at(86_400_000));
    harness.processElement(raw(3, ahead), at(0));
    harness.processElement(farAhead, at(0));

    assertThat(harness.extractOutputValues()).hasSize(2);
    assertThat(harness.getSideOutput(ParseClicks.DEAD_LETTERS))
        .extracting(r -> r.getValue().reason())
        .containsExactly(
            MalformedReason.TS_OUT_OF_RANGE.label(), MalformedReason.TS_OUT_OF_RANGE.label());
  }

  @Test
  void anOversizedRecordIsDeadLetteredWithItsFirstBytesOnlySoTheLetterFitsTheDeadLetterTopic()
      throws Exception {
    byte[] megabyte = new byte[1_000_000];
    java.util.Arrays.fill(megabyte, (byte) 'x');

    harness.processElement(raw(7, megabyte), at(0));

    DeadLetter letter = harness.getSideOutput(ParseClicks.DEAD_LETTERS).poll().getValue();
    assertThat(letter.reason()).isEqualTo(MalformedReason.OVERSIZED.label());
    assertThat(letter.raw())
        .hasSize(io.tally.event.ClickEventCodec.MAX_EVENT_BYTES)
        .isEqualTo(
            java.util.Arrays.copyOf(megabyte, io.tally.event.ClickEventCodec.MAX_EVENT_BYTES));
    assertThat(letter.detail()).contains("1000000 bytes").contains("first 4096 bytes kept");
    assertThat(letter.offset()).isEqualTo(7);
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
