package io.tally.redirect;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.redirect.UserAgentClassifier.Classification;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.NullAndEmptySource;
import org.junit.jupiter.params.provider.ValueSource;

/** Tests for {@link UserAgentClassifier}. */
class UserAgentClassifierTest {

  private final UserAgentClassifier classifier = new UserAgentClassifier();

  @ParameterizedTest(name = "{0}")
  @ValueSource(
      strings = {
        UserAgents.GOOGLEBOT,
        UserAgents.GOOGLEBOT_SMARTPHONE,
        UserAgents.BINGBOT,
        UserAgents.BINGBOT_CHROME,
        UserAgents.FACEBOOK_EXTERNAL_HIT,
        UserAgents.SLACKBOT_LINK_EXPANDING,
        UserAgents.TWITTERBOT,
        UserAgents.DISCORDBOT,
        UserAgents.LINKEDINBOT,
        UserAgents.WHATSAPP,
        UserAgents.TELEGRAMBOT,
        UserAgents.YANDEXBOT,
        UserAgents.HEADLESS_CHROME,
      })
  void callsCrawlersAndLinkPreviewFetchersBots(String userAgent) {
    assertThat(classifier.classify(userAgent).bot()).isTrue();
  }

  static Stream<Arguments> browsers() {
    return Stream.of(
        Arguments.of(UserAgents.CHROME_WINDOWS, "Chrome", "Other"),
        Arguments.of(UserAgents.CHROME_MAC, "Chrome", "Mac"),
        Arguments.of(UserAgents.CHROME_ANDROID_PIXEL, "Chrome Mobile", "Pixel 8"),
        Arguments.of(UserAgents.CHROME_ANDROID_SAMSUNG, "Chrome Mobile", "Samsung SM-S901B"),
        Arguments.of(UserAgents.CHROME_IPHONE, "Chrome Mobile iOS", "iPhone"),
        Arguments.of(UserAgents.FIREFOX_WINDOWS, "Firefox", "Other"),
        Arguments.of(UserAgents.FIREFOX_LINUX, "Firefox", "Other"),
        Arguments.of(UserAgents.FIREFOX_ANDROID, "Firefox Mobile", "Generic Smartphone"),
        Arguments.of(UserAgents.SAFARI_MAC, "Safari", "Mac"),
        Arguments.of(UserAgents.SAFARI_IPHONE, "Mobile Safari", "iPhone"),
        Arguments.of(UserAgents.SAFARI_IPAD, "Mobile Safari", "iPad"),
        Arguments.of(UserAgents.EDGE_WINDOWS, "Edge", "Other"),
        Arguments.of(UserAgents.CHROME_ANDROID_CUBOT, "Chrome Mobile", "Note 30"));
  }

  @ParameterizedTest(name = "{1} on {2}")
  @MethodSource("browsers")
  void namesTheBrowserAndDeviceOfAPersonAndDoesNotCallItABot(String userAgent, String family, String device) {
    assertThat(classifier.classify(userAgent)).isEqualTo(new Classification(family, device, false));
  }

  @Test
  void namesTheCrawlerItRecognises() {
    assertThat(classifier.classify(UserAgents.GOOGLEBOT)).isEqualTo(new Classification("Googlebot", "Spider", true));
    assertThat(classifier.classify(UserAgents.SLACKBOT_LINK_EXPANDING).family()).isEqualTo("Slackbot-LinkExpanding");
  }

  @ParameterizedTest
  @NullAndEmptySource
  @ValueSource(strings = {"   ", "\t"})
  void treatsAMissingUserAgentAsAnUnknownPerson(String userAgent) {
    assertThat(classifier.classify(userAgent)).isEqualTo(new Classification("Other", "Other", false));
  }

  @Test
  void classifiesAnAbsurdlyLongUserAgentByItsBeginning() {
    String huge = UserAgents.GOOGLEBOT + " " + "x".repeat(100_000);

    assertThat(classifier.classify(huge).bot()).isTrue();
    assertThat(classifier.classify(UserAgents.CHROME_WINDOWS + "y".repeat(100_000)).family()).isEqualTo("Chrome");
  }

  @Test
  void answersARepeatedUserAgentFromItsCache() {
    Classification first = classifier.classify(UserAgents.SAFARI_IPHONE);

    // Parsing again would make an equal but new Classification; the cache hands back the same one.
    assertThat(classifier.classify(UserAgents.SAFARI_IPHONE)).isSameAs(first);
  }
}
