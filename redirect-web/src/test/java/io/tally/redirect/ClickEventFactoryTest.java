package io.tally.redirect;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.event.ClickEvent;
import java.time.Instant;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Tests for {@link ClickEventFactory}, with {@link IpHasher} and {@link CountryResolver}. */
class ClickEventFactoryTest {

  private static final String SECRET = "a-secret-of-at-least-16-chars";
  private static final String PROXY = "10.0.0.1";
  private static final String CLIENT = "198.51.100.23";
  private static final UUID CLICK_ID = UUID.fromString("019ace00-0000-7000-8000-000000000001");
  private static final long TS = Instant.parse("2025-11-29T10:00:00Z").toEpochMilli();

  private final ClickEventFactory factory =
      new ClickEventFactory(
          new ClientAddress(Set.of(PROXY)), new IpHasher(SECRET), new UserAgentClassifier(), CountryResolver.headerOnly());

  @Test
  void describesABrowserClickWithoutItsAddress() {
    ClickEvent event =
        factory.create(
            CLICK_ID,
            "abc123",
            TS,
            new ClickEventFactory.RequestFacts(
                CLIENT, null, UserAgents.SAFARI_IPHONE, "https://news.example.com/story?id=7", null, false));

    assertThat(event)
        .isEqualTo(
            new ClickEvent(
                CLICK_ID, "abc123", TS, new IpHasher(SECRET).hash(CLIENT), "Mobile Safari", "iPhone",
                "news.example.com", ClickEvent.UNKNOWN_COUNTRY, false));
  }

  @ParameterizedTest(name = "{0} -> \"{1}\"")
  @CsvSource(
      delimiter = '|',
      emptyValue = "",
      textBlock = """
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
    ClickEvent event = factory.create(CLICK_ID, "abc", TS, facts(referrer, UserAgents.CHROME_WINDOWS, false));

    assertThat(event.referrerDomain()).isEqualTo(domain);
  }

  @Test
  void hasNoReferrerDomainWithoutAReferrer() {
    assertThat(factory.create(CLICK_ID, "abc", TS, facts(null, UserAgents.CHROME_WINDOWS, false)).referrerDomain())
        .isEmpty();
  }

  @Test
  void callsEveryHeadRequestABotEvenFromABrowser() {
    // Browsers follow links with GET; HEAD comes from link checkers and preview fetchers.
    assertThat(factory.create(CLICK_ID, "abc", TS, facts(null, UserAgents.CHROME_WINDOWS, true)).bot()).isTrue();
    assertThat(factory.create(CLICK_ID, "abc", TS, facts(null, UserAgents.CHROME_WINDOWS, false)).bot()).isFalse();
  }

  @Test
  void callsACrawlerABot() {
    ClickEvent event = factory.create(CLICK_ID, "abc", TS, facts(null, UserAgents.GOOGLEBOT, false));

    assertThat(event.bot()).isTrue();
    assertThat(event.uaFamily()).isEqualTo("Googlebot");
    assertThat(event.device()).isEqualTo("Spider");
  }

  @Test
  void hashesTheAddressIntoSomethingThatIsNotTheAddress() {
    String hash = factory.create(CLICK_ID, "abc", TS, facts(null, null, false)).ipHash();

    assertThat(hash)
        .isNotBlank()
        .doesNotContain(CLIENT)
        .doesNotContain("198.51")
        .matches("[A-Za-z0-9_-]{22}"); // 128 bits, URL-safe base64 without padding
  }

  @Test
  void hashesOneAddressAlikeUnderOneSecretAndApartUnderAnother() {
    IpHasher hasher = new IpHasher(SECRET);

    assertThat(hasher.hash(CLIENT)).isEqualTo(new IpHasher(SECRET).hash(CLIENT));
    assertThat(factory.create(CLICK_ID, "abc", TS, facts(null, null, false)).ipHash()).isEqualTo(hasher.hash(CLIENT));
    assertThat(new IpHasher("another-secret-of-16-chars").hash(CLIENT)).isNotEqualTo(hasher.hash(CLIENT));
    assertThat(hasher.hash("198.51.100.24")).isNotEqualTo(hasher.hash(CLIENT));
  }

  @Test
  void hashesTheForwardedAddressWhenThePeerIsATrustedProxy() {
    ClickEvent viaProxy =
        factory.create(
            CLICK_ID, "abc", TS,
            new ClickEventFactory.RequestFacts(PROXY, "203.0.113.5, " + CLIENT, null, null, null, false));
    ClickEvent viaStranger =
        factory.create(
            CLICK_ID, "abc", TS,
            new ClickEventFactory.RequestFacts("192.0.2.99", CLIENT, null, null, null, false));

    assertThat(viaProxy.ipHash()).isEqualTo(new IpHasher(SECRET).hash(CLIENT));
    assertThat(viaStranger.ipHash()).isEqualTo(new IpHasher(SECRET).hash("192.0.2.99"));
  }

  @ParameterizedTest(name = "header {0} -> {1}")
  @CsvSource(
      nullValues = "NULL",
      textBlock = """
          de,   DE
          US,   US
          NULL, unknown
          '',   unknown
          T1,   unknown
          XXX,  unknown
          """)
  void takesTheCountryFromTheTrustedHeaderWhenItIsAnIsoCode(String header, String country) {
    ClickEvent event =
        factory.create(
            CLICK_ID, "abc", TS, new ClickEventFactory.RequestFacts(CLIENT, null, null, null, header, false));

    assertThat(event.country()).isEqualTo(country);
  }

  private static ClickEventFactory.RequestFacts facts(String referrer, String userAgent, boolean head) {
    return new ClickEventFactory.RequestFacts(CLIENT, null, userAgent, referrer, null, head);
  }
}
