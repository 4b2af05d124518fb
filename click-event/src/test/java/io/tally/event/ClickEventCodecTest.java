package io.tally.event;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Tests for {@link ClickEventCodec}. */
class ClickEventCodecTest {

  private static final long NOW = Instant.parse("2025-11-29T10:00:00Z").toEpochMilli();
  private static final UUID ID = UUID.fromString("019ace00-0000-7000-8000-000000000001");
  private static final String VISITOR = "AAECAwQFBgcICQoLDA0ODw";

  @Test
  void roundTripKeepsEveryField() {
    ClickEvent event =
        ClickEvent.builder(ID, "abc_12", NOW - 5)
            .visitor(VISITOR)
            .rangeVisitor(0x8123_4567_89ab_cdefL)
            .userAgent("Mozilla/5.0 (X11; Linux x86_64)")
            .referrerDomain("news.example")
            .country("DE")
            .head(true)
            .build();

    Decoded decoded = ClickEventCodec.decode(ClickEventCodec.encode(event), NOW);

    assertThat(decoded).isEqualTo(new Decoded.Valid(event));
  }

  @Test
  void writesTheRangeVisitorKeyAsSixteenHexDigitsAndLeavesItOutWhenThereIsNone() {
    ClickEvent event =
        ClickEvent.builder(ID, "abc", NOW).visitor(VISITOR).rangeVisitor(0xabcL).build();

    String json = new String(ClickEventCodec.encode(event), StandardCharsets.UTF_8);

    assertThat(json).contains("\"range_visitor\":\"0000000000000abc\"");
    assertThat(
            new String(
                ClickEventCodec.encode(TestClicks.browserClick(ID, "abc", NOW)),
                StandardCharsets.UTF_8))
        .doesNotContain("range_visitor");
  }

  @Test
  void encodesCompactSnakeCaseJsonOfVersion3() {
    String json =
        new String(
            ClickEventCodec.encode(TestClicks.browserClick(ID, "abc", NOW)),
            StandardCharsets.UTF_8);

    assertThat(json)
        .isEqualTo(
            "{\"v\":3,\"click_id\":\""
                + ID
                + "\",\"code\":\"abc\",\"ts\":"
                + NOW
                + ",\"visitor\":\"\",\"ua\":\""
                + TestClicks.DESKTOP_BROWSER
                + "\",\"referrer_domain\":\"\",\"country\":\"unknown\",\"head\":false}");
  }

  @Test
  void marksABurstsClickAndLeavesTheMarkOutOfEveryOther() {
    ClickEvent burst =
        ClickEvent.builder(ID, "abc", NOW).visitor(VISITOR).rangeVisitor(0L).burst(true).build();

    String json = new String(ClickEventCodec.encode(burst), StandardCharsets.UTF_8);

    assertThat(json).endsWith(",\"head\":false,\"burst\":true}");
    assertThat(ClickEventCodec.decode(json.getBytes(StandardCharsets.UTF_8), NOW))
        .isEqualTo(new Decoded.Valid(burst));
    String older = json.replace(",\"burst\":true", "");
    assertThat(
            ((Decoded.Valid) ClickEventCodec.decode(older.getBytes(StandardCharsets.UTF_8), NOW))
                .event()
                .burst())
        .isFalse();
  }

  @Test
  void writesEachCampaignTagThatIsSetAndReadsVersion2WithoutAny() {
    ClickEvent tagged =
        ClickEvent.builder(ID, "abc", NOW)
            .campaign(new ClickEvent.Campaign("news \"daily\"", "", "spring"))
            .build();

    String json = new String(ClickEventCodec.encode(tagged), StandardCharsets.UTF_8);

    assertThat(json)
        .endsWith(
            ",\"head\":false,\"utm_source\":\"news \\\"daily\\\"\",\"utm_campaign\":\"spring\"}");
    assertThat(ClickEventCodec.decode(json.getBytes(StandardCharsets.UTF_8), NOW))
        .isEqualTo(new Decoded.Valid(tagged));
    String version2 =
        "{\"v\":2,\"click_id\":\""
            + ID
            + "\",\"code\":\"abc\",\"ts\":"
            + NOW
            + ",\"visitor\":\"\",\"ua\":\"\",\"referrer_domain\":\"\",\"country\":\"unknown\",\"head\":false}";
    assertThat(ClickEventCodec.decode(version2.getBytes(StandardCharsets.UTF_8), NOW))
        .isEqualTo(new Decoded.Valid(ClickEvent.builder(ID, "abc", NOW).build()));
    assertThat(
            ClickEventCodec.decode(
                json.replace("spring", "spring ").getBytes(StandardCharsets.UTF_8), NOW))
        .as("a tag the producer would have trimmed")
        .isInstanceOf(Decoded.Malformed.class);
  }

  @Test
  void readsVersion1EventsStillInTheTopicWithTheirOwnClassification() {
    String json =
        "{\"v\":1,\"click_id\":\""
            + ID
            + "\",\"code\":\"abc\",\"ts\":"
            + NOW
            + ",\"ip_hash\":\""
            + VISITOR
            + "\",\"ua_family\":\"Googlebot\",\"device\":\"Spider\","
            + "\"referrer_domain\":\"news.example\",\"country\":\"DE\",\"bot\":true}";

    Decoded decoded = ClickEventCodec.decode(json.getBytes(StandardCharsets.UTF_8), NOW);

    assertThat(decoded)
        .isEqualTo(
            new Decoded.Valid(
                ClickEvent.builder(ID, "abc", NOW)
                    .visitor(VISITOR)
                    .referrerDomain("news.example")
                    .country("DE")
                    .v1(new ClickEvent.V1Client("Googlebot", "Spider", true))
                    .build()));
  }

  @Test
  void refusesToMakeAnEventWithAFieldOutOfItsBoundNamingTheField() {
    assertThatThrownBy(
            () ->
                ClickEvent.builder(ID, "abc", NOW)
                    .userAgent("x".repeat(ClickFields.MAX_USER_AGENT + 1))
                    .build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("ua ");
  }

  @Test
  void ignoresUnknownFieldsAndDefaultsMissingDescriptiveOnes() {
    String json =
        "{\"v\":2,\"click_id\":\""
            + ID
            + "\",\"code\":\"abc\",\"ts\":"
            + NOW
            + ",\"new_field\":{\"nested\":[1,2]}}";

    Decoded decoded = ClickEventCodec.decode(json.getBytes(StandardCharsets.UTF_8), NOW);

    assertThat(decoded).isEqualTo(new Decoded.Valid(ClickEvent.builder(ID, "abc", NOW).build()));
  }

  @ParameterizedTest(name = "{0} -> {1}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          not json at all                                                                        | NOT_JSON
          [1,2,3]                                                                                | NOT_JSON
          {"v":1,"click_id":"019ace00-0000-7000-8000-000000000001","code":"abc","ts":1           | NOT_JSON
          {"v":1,"click_id":"019ace00-0000-7000-8000-000000000001","code":"abc","ts":1764410400000} {} | NOT_JSON
          {"click_id":"019ace00-0000-7000-8000-000000000001","code":"abc","ts":1764410400000}    | SCHEMA_VERSION
          {"v":4,"click_id":"019ace00-0000-7000-8000-000000000001","code":"abc","ts":1764410400000} | SCHEMA_VERSION
          {"v":0,"click_id":"019ace00-0000-7000-8000-000000000001","code":"abc","ts":1764410400000} | SCHEMA_VERSION
          {"v":"1","click_id":"019ace00-0000-7000-8000-000000000001","code":"abc","ts":1764410400000} | SCHEMA_VERSION
          {"v":1,"code":"abc","ts":1764410400000}                                                | CLICK_ID
          {"v":1,"click_id":"1-2-3-4-5","code":"abc","ts":1764410400000}                         | CLICK_ID
          {"v":1,"click_id":42,"code":"abc","ts":1764410400000}                                  | CLICK_ID
          {"v":1,"click_id":"019ace00-0000-7000-8000-000000000001","ts":1764410400000}           | CODE
          {"v":1,"click_id":"019ace00-0000-7000-8000-000000000001","code":"a b","ts":1764410400000} | CODE
          {"v":1,"click_id":"019ace00-0000-7000-8000-000000000001","code":"abc"}                 | TS
          {"v":1,"click_id":"019ace00-0000-7000-8000-000000000001","code":"abc","ts":"yesterday"} | TS
          {"v":1,"click_id":"019ace00-0000-7000-8000-000000000001","code":"abc","ts":1.5}        | TS
          {"v":1,"click_id":"019ace00-0000-7000-8000-000000000001","code":"abc","ts":1000}       | TS_OUT_OF_RANGE
          {"v":1,"click_id":"019ace00-0000-7000-8000-000000000001","code":"abc","ts":1764500000000} | TS_OUT_OF_RANGE
          {"v":1,"click_id":"019ace00-0000-7000-8000-000000000001","code":"abc","ts":1764410400000,"bot":"yes"} | FIELD_TYPE
          {"v":1,"click_id":"019ace00-0000-7000-8000-000000000001","code":"abc","ts":1764410400000,"country":7} | FIELD_TYPE
          {"v":2,"click_id":"019ace00-0000-7000-8000-000000000001","code":"abc","ts":1764410400000,"head":1} | FIELD_TYPE
          {"v":2,"click_id":"019ace00-0000-7000-8000-000000000001","code":"abc","ts":1764410400000,"burst":"yes"} | FIELD_TYPE
          {"v":2,"click_id":"019ace00-0000-7000-8000-000000000001","code":"abc","ts":1764410400000,"ua":[]} | FIELD_TYPE
          {"v":2,"click_id":"019ace00-0000-7000-8000-000000000001","code":"abc","ts":1764410400000,"range_visitor":"xyz"} | FIELD_TYPE
          {"v":2,"click_id":"019ace00-0000-7000-8000-000000000001","code":"abc","ts":1764410400000,"range_visitor":"0123456789abcde"} | FIELD_TYPE
          {"v":2,"click_id":"019ace00-0000-7000-8000-000000000001","code":"abc","ts":1764410400000,"range_visitor":"0123456789abcdeg"} | FIELD_TYPE
          {"v":2,"click_id":"019ace00-0000-7000-8000-000000000001","code":"abc","ts":1764410400000,"range_visitor":81985529216486895} | FIELD_TYPE
          {"v":2,"click_id":"019ace00-0000-7000-8000-000000000001","code":"abc","ts":1764410400000,"referrer_domain":"a\\u0000.example"} | FIELD_VALUE
          {"v":2,"click_id":"019ace00-0000-7000-8000-000000000001","code":"abc","ts":1764410400000,"referrer_domain":"News.Example"} | FIELD_VALUE
          {"v":2,"click_id":"019ace00-0000-7000-8000-000000000001","code":"abc","ts":1764410400000,"country":"de"} | FIELD_VALUE
          {"v":2,"click_id":"019ace00-0000-7000-8000-000000000001","code":"abc","ts":1764410400000,"country":"D\\u0000"} | FIELD_VALUE
          {"v":2,"click_id":"019ace00-0000-7000-8000-000000000001","code":"abc","ts":1764410400000,"ua":"Mozilla\\u0000"} | FIELD_VALUE
          {"v":2,"click_id":"019ace00-0000-7000-8000-000000000001","code":"abc","ts":1764410400000,"ua":"Mozilla\\ud800"} | FIELD_VALUE
          {"v":2,"click_id":"019ace00-0000-7000-8000-000000000001","code":"abc","ts":1764410400000,"visitor":"h4sh"} | FIELD_VALUE
          {"v":2,"click_id":"019ace00-0000-7000-8000-000000000001","code":"abc","ts":1764410400000,"visitor":"AAECAwQFBgcICQoLDA0ODB"} | FIELD_VALUE
          {"v":1,"click_id":"019ace00-0000-7000-8000-000000000001","code":"abc","ts":1764410400000,"ip_hash":"AAECAwQFBgcICQoLDA0OD\\u0000"} | FIELD_VALUE
          {"v":1,"click_id":"019ace00-0000-7000-8000-000000000001","code":"abc","ts":1764410400000,"device":"Spider\\n"} | FIELD_VALUE
          {"v":1,"click_id":"019ace00-0000-7000-8000-000000000001","code":"abc","ts":1764410400000,"ua_family":""} | FIELD_VALUE
          """)
  void rejectsMalformedRecordsWithTheirReason(String record, MalformedReason reason) {
    Decoded decoded = ClickEventCodec.decode(record.getBytes(StandardCharsets.UTF_8), NOW);

    assertThat(decoded)
        .isInstanceOfSatisfying(
            Decoded.Malformed.class,
            m -> {
              assertThat(m.reason()).isEqualTo(reason);
              assertThat(m.detail()).isNotBlank();
            });
  }

  @Test
  void rejectsOversizedRecordsUnread() {
    byte[] huge = new byte[ClickEventCodec.MAX_EVENT_BYTES + 1];

    assertThat(ClickEventCodec.decode(huge, NOW))
        .isInstanceOfSatisfying(
            Decoded.Malformed.class,
            m -> assertThat(m.reason()).isEqualTo(MalformedReason.OVERSIZED));
  }

  @Test
  void rejectsNullAsNotJson() {
    assertThat(ClickEventCodec.decode(null, NOW))
        .isInstanceOfSatisfying(
            Decoded.Malformed.class,
            m -> assertThat(m.reason()).isEqualTo(MalformedReason.NOT_JSON));
  }

  @Test
  void clickIdsAreVersion7AndUnique() {
    UUID a = ClickIds.next();
    UUID b = ClickIds.next();

    assertThat(a.version()).isEqualTo(7);
    assertThat(a).isNotEqualTo(b);
  }
}
