package io.tally.redirect;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.tally.event.ClickEvent;
import io.tally.event.ClickEventCodec;
import io.tally.event.ClickFields;
import io.tally.event.Decoded;
import io.tally.event.HostileText;
import java.time.Instant;
import java.time.LocalDate;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * Properties of {@link ClickEventFactory} over generated request headers: whatever a client sends,
 * the referrer's host is dropped or well-formed, a well-formed one is kept, and the event is made
 * and reads back as itself.
 */
class ClickEventFactoryPropertiesTest {

  private static final String PROXY = "10.0.0.1";
  private static final UUID CLICK_ID = UUID.fromString("019ace00-0000-7000-8000-000000000001");
  private static final long TS = Instant.parse("2025-11-29T10:00:00Z").toEpochMilli();
  private static final Map<LocalDate, byte[]> SALTS =
      Map.of(VisitorSalts.dayOf(TS), new byte[] {1, 2, 3});

  /**
   * A host an event may carry, written from RFC 1123 and RFC 3986 rather than from {@code
   * ClickFields}, so that a fault in either cannot pass its own check.
   */
  private static final String LABEL = "[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?";

  private static final String HOST_NAME = LABEL + "(\\." + LABEL + ")*";
  private static final String OCTET = "(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])";
  private static final String IPV4 = OCTET + "(\\." + OCTET + "){3}";
  private static final String IPV6 = "\\[[0-9a-f:]*:[0-9a-f:.]*]";

  private final ClickEventFactory factory =
      new ClickEventFactory(
          new ClientAddress(Set.of(PROXY)),
          new VisitorHasher("a-secret-of-at-least-16-chars", SALTS::get, new SimpleMeterRegistry()),
          true,
          CountryResolver.headerOnly(),
          ClickBursts.off(new SimpleMeterRegistry()),
          new SimpleMeterRegistry());

  @Property(tries = 3000)
  void anyReferrerGivesNoHostOrAWellFormedOne(@ForAll("referrers") String referrer) {
    String host = ClickEventFactory.referrerDomain(referrer);

    assertThat(host)
        .hasSizeLessThanOrEqualTo(253)
        .satisfiesAnyOf(
            h -> assertThat(h).isEmpty(),
            h -> assertThat(h).matches(HOST_NAME),
            h -> assertThat(h).matches(IPV4),
            h -> assertThat(h).hasSizeLessThanOrEqualTo(47).matches(IPV6));
  }

  @Property(tries = 1000)
  void aWellFormedHostIsKeptInLowerCaseWhereverItStandsInTheReferrer(
      @ForAll("hostNames") String host,
      @ForAll("upperCaseMasks") long mask,
      @ForAll("schemes") String scheme,
      @ForAll("userInfos") String userInfo,
      @ForAll("trailingDots") String dot,
      @ForAll("ports") String port,
      @ForAll("rests") String rest) {
    String referrer = scheme + userInfo + mixCase(host, mask) + dot + port + rest;

    String expected = host.length() <= 253 ? host : "";
    assertThat(ClickEventFactory.referrerDomain(referrer)).isEqualTo(expected);
  }

  @Property(tries = 1000)
  void anyHeadersMakeAnEventThatReadsBackAsItself(
      @ForAll("hostileText") String userAgent,
      @ForAll("referrers") String referrer,
      @ForAll("countryHeaders") String country,
      @ForAll("hostileText") String forwardedFor,
      @ForAll boolean head) {
    ClickEventFactory.RequestFacts facts =
        new ClickEventFactory.RequestFacts(
            PROXY, List.of(forwardedFor), userAgent, referrer, country, head);

    ClickEvent event = factory.create(CLICK_ID, "abc", TS, facts);

    assertThat(ClickEventCodec.decode(ClickEventCodec.encode(event), TS))
        .isEqualTo(new Decoded.Valid(event));
  }

  private static String mixCase(String text, long mask) {
    StringBuilder out = new StringBuilder(text.length());
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      out.append((mask >>> (i % 64) & 1) == 1 ? Character.toUpperCase(c) : c);
    }
    return out.toString();
  }

  /**
   * Referrers made of pieces that break host parsers: NUL and other controls, lone and paired
   * surrogates, 4-byte and full-width characters, dots, hyphens, brackets, colons and {@code @},
   * labels around 63 characters and names around 253, behind a scheme or none.
   */
  @Provide
  Arbitrary<String> referrers() {
    Arbitrary<String> body =
        HostileText.of(
            List.of(
                "ｅ",
                "．",
                "。",
                "..",
                "--",
                "::",
                "xn--",
                "A",
                "F",
                "0",
                "255",
                "256",
                "2001:db8",
                "ffff"));
    Arbitrary<String> anyScheme = Arbitraries.oneOf(Arbitraries.just(""), schemes());
    Arbitrary<String> composed =
        Combinators.combine(anyScheme, body).as((scheme, text) -> scheme + text);
    Arbitrary<String> longNames =
        Combinators.combine(
                anyScheme,
                Arbitraries.of(62, 63, 64)
                    .list()
                    .ofMinSize(3)
                    .ofMaxSize(5)
                    .map(lengths -> labelsOf(lengths, 'q')),
                Arbitraries.of(0, 1, 2, 3, 60),
                Arbitraries.of("", ".", "Ü", "\u0000", "-"),
                rests())
            .as(
                (scheme, name, extra, tail, rest) ->
                    scheme + name + "." + "z".repeat(extra) + tail + rest);
    return Arbitraries.oneOf(composed, longNames, Arbitraries.strings().all().ofMaxLength(300));
  }

  /**
   * Well-formed host names, lower case: labels of 1 to 63 letters, digits and inner hyphens, many
   * of 63, so that names of more than 253 characters in all are common.
   */
  @Provide
  Arbitrary<String> hostNames() {
    Arbitrary<String> label =
        Arbitraries.oneOf(
            Arbitraries.strings().withCharRange('a', 'z').withCharRange('0', '9').ofLength(1),
            Combinators.combine(
                    Arbitraries.strings()
                        .withCharRange('a', 'z')
                        .withCharRange('0', '9')
                        .ofLength(1),
                    Arbitraries.strings()
                        .withCharRange('a', 'z')
                        .withCharRange('0', '9')
                        .withChars('-')
                        .ofMaxLength(61),
                    Arbitraries.strings()
                        .withCharRange('a', 'z')
                        .withCharRange('0', '9')
                        .ofLength(1))
                .as((first, inner, last) -> first + inner + last));
    Arbitrary<String> longest = Arbitraries.strings().withCharRange('a', 'z').ofLength(63);
    return Arbitraries.oneOf(label, label, longest)
        .list()
        .ofMinSize(1)
        .ofMaxSize(6)
        .map(labels -> String.join(".", labels));
  }

  @Provide
  Arbitrary<Long> upperCaseMasks() {
    return Arbitraries.oneOf(Arbitraries.just(0L), Arbitraries.longs());
  }

  @Provide
  Arbitrary<String> schemes() {
    return Arbitraries.of(
        "https://", "http://", "HTTP://", "Https://", "android-app://", "//", "a+b.c-d://");
  }

  @Provide
  Arbitrary<String> userInfos() {
    return Arbitraries.of("", "user@", "user:secret@", "@", "a@b@");
  }

  @Provide
  Arbitrary<String> trailingDots() {
    return Arbitraries.of("", ".");
  }

  @Provide
  Arbitrary<String> ports() {
    return Arbitraries.of("", ":", ":80", ":8443", ":65535");
  }

  @Provide
  Arbitrary<String> rests() {
    return Arbitraries.of("", "/", "/a/b?x=1#top", "?q=ü", "#frag", "\\x", "/\u0000\ud800");
  }

  /**
   * Country headers: ISO codes in either case, letters that upper-case into ASCII ({@code ı},
   * {@code ſ}, {@code ß}), and hostile text.
   */
  @Provide
  Arbitrary<String> countryHeaders() {
    return Arbitraries.oneOf(
        Arbitraries.of("de", "DE", "unknown", "UNKNOWN", "ıt", "ſe", "ß", "ﬀ", "T1", "", " DE"),
        Arbitraries.strings().withCharRange('A', 'z').ofMaxLength(3),
        hostileText());
  }

  /** Text of the pieces that break parsers further on, at lengths around the user agent's bound. */
  @Provide
  Arbitrary<String> hostileText() {
    return HostileText.of(ClickFields.MAX_USER_AGENT, 1500);
  }

  private static String labelsOf(List<Integer> lengths, char letter) {
    StringBuilder name = new StringBuilder();
    for (int length : lengths) {
      if (!name.isEmpty()) {
        name.append('.');
      }
      name.append(String.valueOf(letter).repeat(length));
    }
    return name.toString().toLowerCase(Locale.ROOT);
  }
}
