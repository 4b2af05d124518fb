package io.tally.event;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.UUID;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * Properties of {@link ClickEventCodec} and {@link ClickFields} over generated input: any bytes and
 * any field values decode to an event within every bound or to a dead letter with a reason, never
 * to an exception, and every event a producer can make reads back as itself.
 */
class ClickEventCodecPropertiesTest {

  private static final long NOW = Instant.parse("2026-11-29T10:00:00Z").toEpochMilli();
  private static final String[] FIELDS = {
    "visitor",
    "ua",
    "referrer_domain",
    "country",
    "ip_hash",
    "ua_family",
    "device",
    "code",
    "click_id",
    "range_visitor",
    "utm_source",
    "utm_medium",
    "utm_campaign"
  };

  @Property(tries = 2000)
  void anyBytesGiveAnEventWithinItsBoundsOrADeadLetterWithAReason(
      @ForAll("records") byte[] record) {
    assertWellJudged(ClickEventCodec.decode(record, NOW));
  }

  @Property(tries = 2000)
  void anyValueInAnyFieldGivesAnEventWithinItsBoundsOrADeadLetter(
      @ForAll("versions") int version,
      @ForAll("fieldNames") String field,
      @ForAll("hostileText") String value) {
    byte[] record = eventWith(version, field, value);

    Decoded decoded = ClickEventCodec.decode(record, NOW);

    assertWellJudged(decoded);
  }

  @Property(tries = 1000)
  void everyEventAProducerCanMakeReadsBackAsItself(@ForAll("events") ClickEvent event) {
    assertThat(ClickEventCodec.decode(ClickEventCodec.encode(event), NOW))
        .isEqualTo(new Decoded.Valid(event));
  }

  @Property(tries = 2000)
  void anyUserAgentIsMadeFitWithoutChangingAFitOne(@ForAll("hostileText") String raw) {
    String fit = ClickFields.userAgent(raw);

    assertThat(ClickFields.textProblem(fit, ClickFields.MAX_USER_AGENT)).isNull();
    if (ClickFields.textProblem(raw, ClickFields.MAX_USER_AGENT) == null) {
      assertThat(fit).isEqualTo(raw);
    }
  }

  /**
   * Checks a verdict against the bounds as written in {@link ClickFields}'s Javadoc, by other means
   * than its code, so that a fault there cannot pass its own check.
   */
  private static void assertWellJudged(Decoded decoded) {
    if (decoded instanceof Decoded.Malformed bad) {
      assertThat(bad.reason()).isNotNull();
      assertThat(bad.detail()).isNotBlank();
      return;
    }
    ClickEvent event = ((Decoded.Valid) decoded).event();
    assertThat(event.visitor()).matches("|[A-Za-z0-9_-]{22}");
    assertThat(event.country()).matches("unknown|[A-Z]{2}");
    assertThat(event.referrerDomain())
        .satisfiesAnyOf(
            host -> assertThat(host).isEmpty(),
            host -> assertThat(host).hasSizeLessThanOrEqualTo(253).matches(HOST_NAME),
            host -> assertThat(host).matches(IPV4),
            host -> assertThat(host).matches("\\[[0-9a-f:.]{2,45}]"));
    assertPrintable(event.userAgent(), ClickFields.MAX_USER_AGENT);
    for (String tag :
        List.of(
            event.campaign().source(), event.campaign().medium(), event.campaign().campaign())) {
      assertPrintable(tag, ClickFields.MAX_CAMPAIGN_VALUE);
      assertThat(tag).doesNotStartWith(" ").doesNotEndWith(" ");
    }
    if (event.v1() != null) {
      assertPrintable(event.v1().uaFamily(), ClickFields.MAX_CLIENT_NAME);
      assertPrintable(event.v1().device(), ClickFields.MAX_CLIENT_NAME);
    }
  }

  private static final String LABEL = "[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?";
  private static final String HOST_NAME = LABEL + "(\\." + LABEL + ")*";
  private static final String OCTET = "(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])";
  private static final String IPV4 = OCTET + "(\\." + OCTET + "){3}";

  private static void assertPrintable(String text, int maxLength) {
    assertThat(text).hasSizeLessThanOrEqualTo(maxLength).doesNotContainPattern("\\p{Cc}");
    assertThat(StandardCharsets.UTF_8.newEncoder().canEncode(text))
        .as("well-formed UTF-16, no lone surrogate")
        .isTrue();
  }

  /** A valid event's JSON with one field set to {@code value}. */
  private static byte[] eventWith(int version, String field, String value) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (JsonGenerator gen = new JsonFactory().createGenerator(out)) {
      gen.writeStartObject();
      gen.writeNumberField("v", version);
      gen.writeStringField(
          "click_id", field.equals("click_id") ? value : "019ace00-0000-7000-8000-000000000001");
      gen.writeStringField("code", field.equals("code") ? value : "abc");
      gen.writeNumberField("ts", NOW - 1000);
      gen.writeStringField(field, value);
      gen.writeEndObject();
    } catch (IOException e) {
      throw new AssertionError(e);
    }
    return out.toByteArray();
  }

  @Provide
  Arbitrary<Integer> versions() {
    return Arbitraries.of(ClickEvent.V1, ClickEvent.V2, ClickEvent.SCHEMA_VERSION);
  }

  @Provide
  Arbitrary<String> fieldNames() {
    return Arbitraries.of(FIELDS);
  }

  @Provide
  Arbitrary<String> hostileText() {
    return HostileText.of(
        ClickFields.VISITOR_LENGTH,
        ClickFields.MAX_LABEL,
        ClickFields.MAX_CLIENT_NAME,
        ClickFields.MAX_HOST_NAME,
        ClickFields.MAX_USER_AGENT,
        ClickFields.MAX_CAMPAIGN_VALUE,
        2704);
  }

  @Provide
  Arbitrary<byte[]> records() {
    Arbitrary<byte[]> anyBytes =
        Arbitraries.bytes().array(byte[].class).ofMaxSize(ClickEventCodec.MAX_EVENT_BYTES + 2);
    Arbitrary<byte[]> mangled =
        Combinators.combine(
                events(),
                Arbitraries.integers().between(0, 400),
                Arbitraries.bytes().array(byte[].class).ofMinSize(1).ofMaxSize(8))
            .as(
                (event, at, noise) -> {
                  byte[] bytes = ClickEventCodec.encode(event);
                  int start = Math.min(at, bytes.length - 1);
                  System.arraycopy(
                      noise, 0, bytes, start, Math.min(noise.length, bytes.length - start));
                  return bytes;
                });
    return Arbitraries.oneOf(anyBytes, mangled);
  }

  /** Events as a producer makes them: every field shaped by {@link ClickFields}'s rules. */
  @Provide
  Arbitrary<ClickEvent> events() {
    Arbitrary<String> visitor =
        Arbitraries.oneOf(
            Arbitraries.just(""),
            Arbitraries.bytes()
                .array(byte[].class)
                .ofSize(16)
                .map(b -> Base64.getUrlEncoder().withoutPadding().encodeToString(b)));
    Arbitrary<String> host =
        Arbitraries.strings()
            .withCharRange('a', 'z')
            .withCharRange('0', '9')
            .ofMinLength(1)
            .ofMaxLength(ClickFields.MAX_LABEL)
            .list()
            .ofMinSize(1)
            .ofMaxSize(4)
            .map(labels -> String.join(".", labels));
    Arbitrary<String> referrer =
        Arbitraries.oneOf(
            Arbitraries.just(""), host, Arbitraries.of("203.0.113.7", "[2001:db8::1]"));
    Arbitrary<String> country =
        Arbitraries.oneOf(
            Arbitraries.just(ClickEvent.UNKNOWN_COUNTRY),
            Arbitraries.strings().withCharRange('A', 'Z').ofLength(2));
    return Combinators.combine(
            visitor,
            Arbitraries.longs(),
            hostileText().map(ClickFields::userAgent),
            referrer,
            country,
            // Bit 0 is the head flag, bit 1 the burst flag: the combinator takes at most 8.
            Arbitraries.integers().between(0, 3),
            Arbitraries.longs().between(0, 3_000_000_000L),
            campaigns())
        .as(
            (v, range, ua, ref, c, flags, age, campaign) ->
                ClickEvent.builder(new UUID(range ^ age, ~range), "abc", NOW - age)
                    .visitor(v)
                    .rangeVisitor(range)
                    .userAgent(ua)
                    .referrerDomain(ref)
                    .country(c)
                    .head((flags & 1) != 0)
                    .burst((flags & 2) != 0)
                    .campaign(campaign)
                    .build());
  }

  /** Campaigns as redirect-web tags them: each value of any text, made fit, or untagged. */
  private Arbitrary<ClickEvent.Campaign> campaigns() {
    Arbitrary<String> tag =
        Arbitraries.oneOf(Arbitraries.just(""), hostileText().map(ClickFields::campaignValue));
    return Combinators.combine(tag, tag, tag).as(ClickEvent.Campaign::new);
  }

  @Property(tries = 2000)
  void anyCampaignValueIsMadeFit(@ForAll("hostileText") String raw) {
    String fit = ClickFields.campaignValue(raw);

    assertThat(ClickFields.textProblem(fit, ClickFields.MAX_CAMPAIGN_VALUE)).isNull();
    assertThat(fit).isEqualTo(fit.strip());
    assertThat(
            ClickEvent.builder(new UUID(1, 2), "abc", NOW)
                .campaign(new ClickEvent.Campaign(fit, fit, fit))
                .build()
                .campaign()
                .source())
        .isEqualTo(fit);
  }
}
