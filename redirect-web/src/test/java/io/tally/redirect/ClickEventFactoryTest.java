package io.tally.redirect;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.tally.event.ClickEvent;
import io.tally.event.ClickFields;
import io.tally.event.VisitorSketches;
import java.time.Instant;
import java.time.LocalDate;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.NullSource;
import org.junit.jupiter.params.provider.ValueSource;

/** Tests for {@link ClickEventFactory}, with {@link VisitorHasher} and {@link CountryResolver}. */
class ClickEventFactoryTest {

  private static final String SECRET = "a-secret-of-at-least-16-chars";
  private static final String PROXY = "10.0.0.1";
  private static final String CLIENT = "198.51.100.23";
  private static final UUID CLICK_ID = UUID.fromString("019ace00-0000-7000-8000-000000000001");
  private static final long TS = Instant.parse("2025-11-29T10:00:00Z").toEpochMilli();

  private static final LocalDate DAY = VisitorSalts.dayOf(TS);
  private static final Map<LocalDate, byte[]> SALTS =
      Map.of(DAY, new byte[] {1, 2, 3}, DAY.plusDays(1), new byte[] {4, 5, 6});

  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final VisitorHasher hasher = hasher(SECRET);
  private final ClickEventFactory factory =
      new ClickEventFactory(
          new ClientAddress(Set.of(PROXY)),
          hasher,
          true,
          CountryResolver.headerOnly(),
          ClickBursts.off(registry),
          registry);

  private static VisitorHasher hasher(String secret) {
    return new VisitorHasher(secret, SALTS::get, new SimpleMeterRegistry());
  }

  @Test
  void describesABrowserClickWithoutItsAddress() {
    ClickEvent event =
        factory.create(
            CLICK_ID,
            "abc123",
            TS,
            new ClickEventFactory.RequestFacts(
                CLIENT,
                List.of(),
                UserAgents.SAFARI_IPHONE,
                "https://news.example.com/story?id=7",
                null,
                false));

    assertThat(event)
        .isEqualTo(
            ClickEvent.builder(CLICK_ID, "abc123", TS)
                .visitor(hasher.hash(TS, "abc123", CLIENT, UserAgents.SAFARI_IPHONE))
                .rangeVisitor(hasher.rangeKey("abc123", CLIENT, UserAgents.SAFARI_IPHONE))
                .userAgent(UserAgents.SAFARI_IPHONE)
                .referrerDomain("news.example.com")
                .build());
  }

  @ParameterizedTest(name = "{0} -> \"{1}\"")
  @CsvSource(
      delimiter = '|',
      emptyValue = "",
      textBlock =
          """
          https://News.Example.COM:8443/a/b?utm_source=x#top | news.example.com
          http://example.org                                 | example.org
          https://user:secret@intranet.example/private       | intranet.example
          https://t.co/AbCdEf                                 | t.co
          android-app://com.google.android.gm/               | com.google.android.gm
          ''                                                  | ''
          '   '                                               | ''
          not a url at all                                    | ''
          /relative/referrer                                  | ''
          https://bad host.example/                           | ''
          HTTP://News.Example.:8080/x                         | news.example
          //cdn.example/page                                  | cdn.example
          https://a.example\\@b.example/                      | a.example
          https://example.com:/                               | example.com
          https://r3---sn-4g5e.googlevideo.com/               | r3---sn-4g5e.googlevideo.com
          https://1.2.3.4.sslip.io/                           | 1.2.3.4.sslip.io
          """)
  void reducesTheReferrerToItsHost(String referrer, String domain) {
    ClickEvent event =
        factory.create(CLICK_ID, "abc", TS, facts(referrer, UserAgents.CHROME_WINDOWS, false));

    assertThat(event.referrerDomain()).isEqualTo(domain);
  }

  @ParameterizedTest(name = "{0} -> {1}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          https://bücher.de/                   | xn--bcher-kva.de
          https://BÜCHER.de./x                 | xn--bcher-kva.de
          https://faß.de/                      | xn--fa-hia.de
          https://пример.рф/путь               | xn--e1afmkfd.xn--p1ai
          https://ｅｘａｍｐｌｅ．ｃｏｍ/      | example.com
          https://😀.example/                  | xn--e28h.example
          """)
  void keepsAnInternationalReferrerHostInPunycode(String referrer, String domain) {
    assertThat(ClickEventFactory.referrerDomain(referrer)).isEqualTo(domain);
  }

  @ParameterizedTest(name = "{0} -> {1}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          http://203.0.113.7/                     | 203.0.113.7
          http://203.0.113.7:8080/x               | 203.0.113.7
          https://[2001:DB8::1]/                  | [2001:db8::1]
          https://user@[2001:db8::a:1]:8443/path  | [2001:db8::a:1]
          https://[::ffff:192.0.2.1]/             | [::ffff:192.0.2.1]
          """)
  void keepsAnIpLiteralReferrerHost(String referrer, String domain) {
    assertThat(ClickEventFactory.referrerDomain(referrer)).isEqualTo(domain);
  }

  @ParameterizedTest(name = "[{index}] {0}")
  @ValueSource(
      strings = {
        "https://exa\u0000mple.com/",
        "https://exa\u0007mple.com/",
        "https://example\u007f.com/",
        "https://exa\ud800mple.com/",
        "https://ex_ample.com/",
        "https://-example.com/",
        "https://example-.com/",
        "https://example..com/",
        "https://example.com../",
        "https://.example.com/",
        "https://%65xample.com/",
        "https://example.com:http/",
        "https://example.com:123456/",
        "https://example.com:65536/",
        "https://[2001:db8::1/",
        "https://[2001:db8::1%25eth0]/",
        "https://[2001:db8::g]/",
        "https://[203.0.113.7]/",
        "https://[ｆｆ::1]/",
        "https://[2001:db8::1]x/",
        "https:///path",
        "https://user@/",
        "https:example.com",
        "1https://example.com/",
        "://example.com/",
        "https://xn--a.bücher.de/",
      })
  void dropsAReferrerHostThatIsNotAWellFormedNameOrAddress(String referrer) {
    ClickEvent event =
        factory.create(CLICK_ID, "abc", TS, facts(referrer, UserAgents.CHROME_WINDOWS, false));

    assertThat(event.referrerDomain()).isEmpty();
    assertThat(droppedReferrers()).isEqualTo(1);
  }

  @Test
  void dropsAndCountsAReferrerHostOfThousandsOfCharacters() {
    // Each label is within its bound; only the whole name is too long to be a host.
    String host = String.join(".", Collections.nCopies(48, "q".repeat(60)));

    ClickEvent event =
        factory.create(
            CLICK_ID, "abc", TS, facts("https://" + host + "/", UserAgents.CHROME_WINDOWS, false));

    assertThat(host).hasSizeGreaterThan(2_900);
    assertThat(event.referrerDomain()).isEmpty();
    assertThat(droppedReferrers()).isEqualTo(1);
  }

  @Test
  void keepsALabelOfSixtyThreeCharactersAndDropsOneOfSixtyFour() {
    String fits = "a".repeat(ClickFields.MAX_LABEL) + ".example";
    String tooLong = "a".repeat(ClickFields.MAX_LABEL + 1) + ".example";

    assertThat(ClickEventFactory.referrerDomain("https://" + fits + "/")).isEqualTo(fits);
    assertThat(ClickEventFactory.referrerDomain("https://" + tooLong + "/")).isEmpty();
  }

  @Test
  void keepsAHostOf253CharactersAndDropsOneOf254() {
    // Three labels of 63, a dot after each: 192 characters, then a last label to reach the total.
    String prefix = ("b".repeat(63) + ".").repeat(3);
    String fits = prefix + "c".repeat(253 - prefix.length());
    String tooLong = prefix + "c".repeat(254 - prefix.length());

    assertThat(fits).hasSize(253);
    assertThat(ClickEventFactory.referrerDomain("https://" + fits + "/")).isEqualTo(fits);
    assertThat(ClickEventFactory.referrerDomain("https://" + tooLong + "/")).isEmpty();
    assertThat(ClickEventFactory.referrerDomain("https://" + fits + "./"))
        .as("a trailing dot is not part of the length")
        .isEqualTo(fits);
  }

  @ParameterizedTest(name = "[{index}] {0}")
  @NullSource
  @ValueSource(strings = {"", "   "})
  void countsNoDroppedReferrerWhenThereWasNone(String referrer) {
    factory.create(CLICK_ID, "abc", TS, facts(referrer, UserAgents.CHROME_WINDOWS, false));

    assertThat(droppedReferrers()).isZero();
  }

  @Test
  void hasNoReferrerDomainWithoutAReferrer() {
    assertThat(
            factory
                .create(CLICK_ID, "abc", TS, facts(null, UserAgents.CHROME_WINDOWS, false))
                .referrerDomain())
        .isEmpty();
  }

  @Test
  void marksHeadRequestsAndLeavesClassificationToTheJob() {
    ClickEvent head = factory.create(CLICK_ID, "abc", TS, facts(null, UserAgents.GOOGLEBOT, true));

    assertThat(head.head()).isTrue();
    assertThat(head.userAgent()).isEqualTo(UserAgents.GOOGLEBOT);
    assertThat(
            factory
                .create(CLICK_ID, "abc", TS, facts(null, UserAgents.CHROME_WINDOWS, false))
                .head())
        .isFalse();
  }

  @Test
  void cutsTheUserAgentItSends() {
    ClickEvent event =
        factory.create(CLICK_ID, "abc", TS, facts(null, "Mozilla/5.0 " + "x".repeat(5000), false));

    assertThat(event.userAgent()).hasSize(ClickFields.MAX_USER_AGENT).startsWith("Mozilla/5.0 ");
  }

  @Test
  void replacesWhatNoFieldMayHoldInTheUserAgent() {
    ClickEvent event =
        factory.create(CLICK_ID, "abc", TS, facts(null, "Bot\u0000/1.0 \ud800 \u0085", false));

    assertThat(event.userAgent()).isEqualTo("Bot\uFFFD/1.0 \uFFFD \uFFFD");
  }

  @Test
  void hashesTheVisitorIntoSomethingThatIsNotTheAddress() {
    String hash = factory.create(CLICK_ID, "abc", TS, facts(null, null, false)).visitor();

    assertThat(hash)
        .isNotBlank()
        .doesNotContain(CLIENT)
        .doesNotContain("198.51")
        .matches("[A-Za-z0-9_-]{22}"); // 128 bits, URL-safe base64 without padding
  }

  @Test
  void oneVisitorHashesAlikeWithinADayAndLinkAndApartAcrossDaysLinksSecretsAndAgents() {
    String hash = hasher.hash(TS, "abc", CLIENT, UserAgents.FIREFOX_LINUX);

    assertThat(hasher(SECRET).hash(TS + 3_600_000, "abc", CLIENT, UserAgents.FIREFOX_LINUX))
        .as("same day")
        .isEqualTo(hash);
    assertThat(hasher.hash(TS + 86_400_000, "abc", CLIENT, UserAgents.FIREFOX_LINUX))
        .as("next day")
        .isNotEqualTo(hash);
    assertThat(hasher.hash(TS, "abd", CLIENT, UserAgents.FIREFOX_LINUX))
        .as("another link")
        .isNotEqualTo(hash);
    assertThat(
            hasher("another-secret-of-16-chars").hash(TS, "abc", CLIENT, UserAgents.FIREFOX_LINUX))
        .isNotEqualTo(hash);
    assertThat(hasher.hash(TS, "abc", "198.51.100.24", UserAgents.FIREFOX_LINUX))
        .isNotEqualTo(hash);
    assertThat(hasher.hash(TS, "abc", CLIENT, UserAgents.CHROME_WINDOWS)).isNotEqualTo(hash);
    assertThat(
            factory
                .create(CLICK_ID, "abc", TS, facts(null, UserAgents.FIREFOX_LINUX, false))
                .visitor())
        .isEqualTo(hash);
  }

  @Test
  void oneVisitorKeysAlikeAcrossDaysAndApartAcrossLinksSecretsAddressesAndAgents() {
    ClickEvent monday =
        factory.create(CLICK_ID, "abc", TS, facts(null, UserAgents.FIREFOX_LINUX, false));
    ClickEvent tuesday =
        factory.create(
            CLICK_ID, "abc", TS + 86_400_000, facts(null, UserAgents.FIREFOX_LINUX, false));
    long key = monday.rangeVisitor();

    assertThat(key).isNotEqualTo(ClickEvent.NO_RANGE_VISITOR);
    assertThat(tuesday.visitor()).as("the daily hash moves on").isNotEqualTo(monday.visitor());
    assertThat(tuesday.rangeVisitor()).as("the key across days stays").isEqualTo(key);
    assertThat(hasher.rangeKey("abd", CLIENT, UserAgents.FIREFOX_LINUX)).isNotEqualTo(key);
    assertThat(
            hasher("another-secret-of-16-chars").rangeKey("abc", CLIENT, UserAgents.FIREFOX_LINUX))
        .isNotEqualTo(key);
    assertThat(hasher.rangeKey("abc", "198.51.100.24", UserAgents.FIREFOX_LINUX)).isNotEqualTo(key);
    assertThat(hasher.rangeKey("abc", CLIENT, UserAgents.CHROME_WINDOWS)).isNotEqualTo(key);
    assertThat(VisitorSketches.formatKey(key))
        .as("no part of the daily hash or the address")
        .doesNotContain(CLIENT)
        .isNotEqualTo(monday.visitor());
  }

  @Test
  void marksTheClicksOfAClientFollowingOneLinkFasterThanAPersonAsABursts() {
    ClickEventFactory bursting =
        new ClickEventFactory(
            new ClientAddress(Set.of(PROXY)),
            hasher,
            true,
            CountryResolver.headerOnly(),
            new ClickBursts(3, 64, registry),
            registry);

    List<Boolean> marks = new java.util.ArrayList<>();
    for (int i = 0; i < 5; i++) {
      marks.add(
          bursting
              .create(CLICK_ID, "abc", TS, facts(null, UserAgents.FIREFOX_LINUX + " b/" + i, false))
              .burst());
    }

    assertThat(marks).containsExactly(false, false, false, true, true);
  }

  @Test
  void sendsNoKeyAcrossDaysWhenTheOperatorTurnedThemOff() {
    ClickEventFactory withoutKeys =
        new ClickEventFactory(
            new ClientAddress(Set.of(PROXY)),
            hasher,
            false,
            CountryResolver.headerOnly(),
            ClickBursts.off(new SimpleMeterRegistry()),
            new SimpleMeterRegistry());

    ClickEvent event =
        withoutKeys.create(CLICK_ID, "abc", TS, facts(null, UserAgents.FIREFOX_LINUX, false));

    assertThat(event.visitor()).isNotEmpty();
    assertThat(event.rangeVisitor()).isEqualTo(ClickEvent.NO_RANGE_VISITOR);
  }

  @Test
  void sendsNoVisitorHashNorKeyForADayWhoseSaltIsUnknown() {
    long longAgo = TS - 10 * 86_400_000L;

    ClickEvent event =
        factory.create(CLICK_ID, "abc", longAgo, facts(null, UserAgents.FIREFOX_LINUX, false));

    assertThat(event.visitor()).isEmpty();
    assertThat(event.rangeVisitor()).isEqualTo(ClickEvent.NO_RANGE_VISITOR);
  }

  @Test
  void hashesTheForwardedAddressWhenThePeerIsATrustedProxy() {
    ClickEvent viaProxy =
        factory.create(
            CLICK_ID,
            "abc",
            TS,
            new ClickEventFactory.RequestFacts(
                PROXY, List.of("203.0.113.5, " + CLIENT), null, null, null, false));
    ClickEvent viaStranger =
        factory.create(
            CLICK_ID,
            "abc",
            TS,
            new ClickEventFactory.RequestFacts(
                "192.0.2.99", List.of(CLIENT), null, null, null, false));

    assertThat(viaProxy.visitor()).isEqualTo(hasher.hash(TS, "abc", CLIENT, ""));
    assertThat(viaStranger.visitor()).isEqualTo(hasher.hash(TS, "abc", "192.0.2.99", ""));
  }

  @ParameterizedTest(name = "header {0} -> {1}")
  @CsvSource(
      nullValues = "NULL",
      textBlock =
          """
          de,   DE
          US,   US
          NULL, unknown
          '',   unknown
          T1,   unknown
          XXX,  unknown
          ıt,   unknown
          ſe,   unknown
          ÄT,   unknown
          """)
  void takesTheCountryFromTheHeaderOfATrustedProxyWhenItIsAnIsoCode(String header, String country) {
    ClickEvent event =
        factory.create(
            CLICK_ID,
            "abc",
            TS,
            new ClickEventFactory.RequestFacts(PROXY, List.of(CLIENT), null, null, header, false));

    assertThat(event.country()).isEqualTo(country);
  }

  @Test
  void ignoresTheCountryHeaderOfAPeerThatIsNotATrustedProxy() {
    // Anyone can send the CDN's header; only the CDN's own connection may set the country.
    ClickEvent event =
        factory.create(
            CLICK_ID,
            "abc",
            TS,
            new ClickEventFactory.RequestFacts(CLIENT, List.of(), null, null, "DE", false));

    assertThat(event.country()).isEqualTo(ClickEvent.UNKNOWN_COUNTRY);
  }

  private double droppedReferrers() {
    return registry.get("tally.referrers.dropped").counter().count();
  }

  private static ClickEventFactory.RequestFacts facts(
      String referrer, String userAgent, boolean head) {
    return new ClickEventFactory.RequestFacts(CLIENT, List.of(), userAgent, referrer, null, head);
  }
}
