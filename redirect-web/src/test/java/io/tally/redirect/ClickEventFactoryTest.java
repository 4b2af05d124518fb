package io.tally.redirect;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.tally.event.ClickEvent;
import io.tally.event.VisitorSketches;
import java.time.Instant;
import java.time.LocalDate;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

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

  private final VisitorHasher hasher = hasher(SECRET);
  private final ClickEventFactory factory =
      new ClickEventFactory(
          new ClientAddress(Set.of(PROXY)), hasher, true, CountryResolver.headerOnly());

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
            new ClickEvent(
                CLICK_ID,
                "abc123",
                TS,
                hasher.hash(TS, "abc123", CLIENT, UserAgents.SAFARI_IPHONE),
                hasher.rangeKey("abc123", CLIENT, UserAgents.SAFARI_IPHONE),
                UserAgents.SAFARI_IPHONE,
                "news.example.com",
                ClickEvent.UNKNOWN_COUNTRY,
                false,
                null));
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
          """)
  void reducesTheReferrerToItsHost(String referrer, String domain) {
    ClickEvent event =
        factory.create(CLICK_ID, "abc", TS, facts(referrer, UserAgents.CHROME_WINDOWS, false));

    assertThat(event.referrerDomain()).isEqualTo(domain);
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

    assertThat(event.userAgent()).hasSize(ClickEvent.MAX_USER_AGENT).startsWith("Mozilla/5.0 ");
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
  void sendsNoKeyAcrossDaysWhenTheOperatorTurnedThemOff() {
    ClickEventFactory withoutKeys =
        new ClickEventFactory(
            new ClientAddress(Set.of(PROXY)), hasher, false, CountryResolver.headerOnly());

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

  private static ClickEventFactory.RequestFacts facts(
      String referrer, String userAgent, boolean head) {
    return new ClickEventFactory.RequestFacts(CLIENT, List.of(), userAgent, referrer, null, head);
  }
}
