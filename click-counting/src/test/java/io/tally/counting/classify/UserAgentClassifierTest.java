package io.tally.counting.classify;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tally.testing.ClickOracle;
import io.tally.testing.Clients;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.NullAndEmptySource;
import org.junit.jupiter.params.provider.ValueSource;

/** Tests for {@link UserAgentClassifier}. */
class UserAgentClassifierTest {

  private static final String CHROME_WINDOWS =
      "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko)"
          + " Chrome/131.0.0.0 Safari/537.36";
  private static final String SAFARI_IPHONE =
      "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like"
          + " Gecko) Version/17.5 Mobile/15E148 Safari/604.1";
  private static final String FIREFOX_LINUX =
      "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0";
  private static final String SAMSUNG_TABLET =
      "Mozilla/5.0 (Linux; Android 13; SM-X710) AppleWebKit/537.36 (KHTML, like Gecko)"
          + " SamsungBrowser/25.0 Chrome/121.0.0.0 Safari/537.36";
  private static final String EDGE_WINDOWS = CHROME_WINDOWS + " Edg/131.0.0.0";
  private static final String CUBOT_PHONE =
      "Mozilla/5.0 (Linux; Android 12; CUBOT KINGKONG 7) AppleWebKit/537.36 (KHTML, like Gecko)"
          + " Chrome/120.0.0.0 Mobile Safari/537.36";

  private static UserAgentClassifier classifier;

  @BeforeAll
  static void buildTheSharedAnalyzerOnce() {
    classifier = UserAgentClassifier.shared();
  }

  /** The clients tests, benchmarks and chaos send: the oracle's table must say what this says. */
  @ParameterizedTest
  @MethodSource("tableClients")
  void answersEveryClientOfTheOraclesTableAsTheTableSays(Clients.Client client) {
    ClickOracle.Facts expected = client.facts();
    assertThat(classifier.classify(client.userAgent(), false))
        .isEqualTo(
            new UserAgentFacts(
                expected.browser(), expected.os(), expected.device(), expected.botKind()));
  }

  static Stream<Clients.Client> tableClients() {
    return Stream.concat(Clients.PEOPLE.stream(), Clients.BOTS.stream());
  }

  @Test
  void chromeOnWindowsIsAHumanOnADesktop() {
    assertThat(classifier.classify(CHROME_WINDOWS, false))
        .isEqualTo(new UserAgentFacts("Chrome", "Windows", "desktop", ""));
  }

  @Test
  void safariOnAnIphoneIsAHumanOnAPhone() {
    assertThat(classifier.classify(SAFARI_IPHONE, false))
        .isEqualTo(new UserAgentFacts("Safari", "iOS", "phone", ""));
  }

  @Test
  void firefoxOnLinuxIsAHumanOnADesktop() {
    assertThat(classifier.classify(FIREFOX_LINUX, false))
        .isEqualTo(new UserAgentFacts("Firefox", "Linux", "desktop", ""));
  }

  @Test
  void samsungInternetOnAnAndroidTabletIsAHumanOnATablet() {
    assertThat(classifier.classify(SAMSUNG_TABLET, false))
        .isEqualTo(new UserAgentFacts("Samsung Internet", "Android", "tablet", ""));
  }

  @Test
  void edgeIsNotMistakenForTheChromeItsAgentAlsoNames() {
    assertThat(classifier.classify(EDGE_WINDOWS, false))
        .isEqualTo(new UserAgentFacts("Edge", "Windows", "desktop", ""));
  }

  @Test
  void anAppsWebViewIsAHumanInAnInAppBrowser() {
    UserAgentFacts facts =
        classifier.classify(
            "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML,"
                + " like Gecko) Mobile/15E148 Instagram 339.0.3.12.91 (iPhone14,5; iOS 17_5; en_US;"
                + " en; scale=3.00; 1170x2532; 618329009)",
            false);

    assertThat(facts).isEqualTo(new UserAgentFacts("In-App", "iOS", "phone", ""));
  }

  @Test
  void aCubotPhoneIsAHumanDespiteTheBotInItsBrandName() {
    UserAgentFacts facts = classifier.classify(CUBOT_PHONE, false);

    assertThat(facts.bot()).isFalse();
    assertThat(facts).isEqualTo(new UserAgentFacts("Chrome", "Android", "phone", ""));
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
        "Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like"
            + " Gecko) Chrome/131.0.6778.69 Mobile Safari/537.36 (compatible; Googlebot/2.1;"
            + " +http://www.google.com/bot.html)",
        "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; bingbot/2.0;"
            + " +http://www.bing.com/bingbot.htm) Chrome/116.0.1938.76 Safari/537.36",
        "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2;"
            + " +https://openai.com/gptbot)",
        "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko)"
            + " HeadlessChrome/120.0.0.0 Safari/537.36"
      })
  void searchAndAiCrawlersAndHeadlessBrowsersAreCrawlers(String agent) {
    assertThat(classifier.classify(agent, false)).isEqualTo(UserAgentFacts.ofBot(BotKind.CRAWLER));
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)",
        "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)",
        "Twitterbot/1.0",
        "WhatsApp/2.23.20.0 A",
        "Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)",
        "TelegramBot (like TwitterBot)",
        "LinkedInBot/1.0 (compatible; Mozilla/5.0; Apache-HttpClient +http://www.linkedin.com)",
        "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_11_1) AppleWebKit/601.2.4 (KHTML, like Gecko)"
            + " Version/9.0.1 Safari/601.2.4 facebookexternalhit/1.1 Facebot Twitterbot/1.0"
      })
  void linkPreviewFetchersArePreviewsEvenWhenTheyNameAnHttpLibraryOrABrowser(String agent) {
    assertThat(classifier.classify(agent, false)).isEqualTo(UserAgentFacts.ofBot(BotKind.PREVIEW));
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "Mozilla/5.0 (compatible; UptimeRobot/2.0; http://www.uptimerobot.com/)",
        "Pingdom.com_bot_version_1.4_(http://www.pingdom.com/)",
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko)"
            + " Chrome/120.0.0.0 Safari/537.36 Edg/120.0.0.0 (Windows; Datadog Synthetics)"
      })
  void uptimeChecksAreMonitorsEvenBehindARealBrowsersAgent(String agent) {
    assertThat(classifier.classify(agent, false)).isEqualTo(UserAgentFacts.ofBot(BotKind.MONITOR));
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "curl/8.5.0",
        "python-requests/2.31.0",
        "Go-http-client/1.1",
        "okhttp/4.12.0",
        "Java/17.0.2",
        "Apache-HttpClient/4.5.14 (Java/17.0.8)",
        "axios/1.6.8",
        "node",
        "Wget/1.21.4"
      })
  void httpLibrariesAndCommandLineToolsAreHttpClients(String agent) {
    assertThat(classifier.classify(agent, false))
        .isEqualTo(UserAgentFacts.ofBot(BotKind.HTTP_CLIENT));
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "Mozilla/5.0 (compatible; CentComBot/",
        "Mozilla/5.0 (compatible; SimpleScraper)",
        "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/107.0"
            + " Safari/537.36 (+https://example.org/about)",
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko)"
            + " Chrome/110.0.0.0 Safari/537.36 scraping@example.org",
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko)"
            + " Chrome/120.0.0.0 Safari/537.36 Playwright/1.40.0"
      })
  void agentsThatNameACrawlerWordAnAddressOrAnAutomationToolAreCrawlers(String agent) {
    assertThat(classifier.classify(agent, false)).isEqualTo(UserAgentFacts.ofBot(BotKind.CRAWLER));
  }

  @ParameterizedTest
  @ValueSource(strings = {"Klaviyo/1.0", "Mozilla/5.0", "Feeder / 1.10.8(88)"})
  void anAgentWhoseDeviceYauaaCannotTellIsACrawler(String agent) {
    assertThat(classifier.classify(agent, false)).isEqualTo(UserAgentFacts.ofBot(BotKind.CRAWLER));
  }

  @Test
  void aBrowserThatGivesAVersionWithAnAtSignIsStillAHuman() {
    String ecosia =
        "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0"
            + " Mobile Safari/537.36 (Ecosia android@131.0.0.0)";

    assertThat(classifier.classify(ecosia, false).bot()).isFalse();
  }

  @ParameterizedTest
  @NullAndEmptySource
  @ValueSource(strings = {"   ", "\t"})
  void aMissingOrBlankAgentIsAnHttpClient(String agent) {
    assertThat(classifier.classify(agent, false))
        .isEqualTo(UserAgentFacts.ofBot(BotKind.HTTP_CLIENT));
  }

  @Test
  void aHeadRequestIsABotEvenWithABrowsersAgent() {
    UserAgentFacts facts = classifier.classify(CHROME_WINDOWS, true);

    assertThat(facts.botKind()).isEqualTo("head");
    assertThat(facts.bot()).isTrue();
  }

  @Test
  void everyBotHasTheBotDeviceAndNoBrowserOrOs() {
    assertThat(classifier.classify("curl/8.5.0", false))
        .isEqualTo(new UserAgentFacts("Other", "Other", "bot", "http-client"));
  }

  @Test
  void aTenThousandCharacterAgentIsCutAndStillClassified() {
    String huge = CHROME_WINDOWS + " " + "x".repeat(10_000 - CHROME_WINDOWS.length() - 1);

    assertThat(huge).hasSize(10_000);
    assertThat(classifier.classify(huge, false).bot()).isFalse();
    assertThat(classifier.classify(huge, false).browser()).isEqualTo("Chrome");
    assertThat(UserAgentClassifier.cut(huge)).hasSize(UserAgentClassifier.MAX_AGENT_LENGTH);
  }

  @Test
  void aBotWordPastTheCutIsNotSeen() {
    String padded =
        CHROME_WINDOWS + " " + "x".repeat(UserAgentClassifier.MAX_AGENT_LENGTH) + " curl/8.5.0";

    assertThat(classifier.classify(padded, false).bot()).isFalse();
  }

  @Test
  void theCutNeverSplitsASurrogatePair() {
    String agent = "a".repeat(UserAgentClassifier.MAX_AGENT_LENGTH - 1) + "\uD83D\uDE00" + "tail";

    assertThat(UserAgentClassifier.cut(agent)).hasSize(UserAgentClassifier.MAX_AGENT_LENGTH - 1);
  }

  @Test
  void freshBuildNumbersAndRandomTokensCostOneParseBetweenThem() {
    long before = classifier.agentsParsed();
    for (int i = 1; i <= 2_000; i++) {
      String agent =
          "Mozilla/5.0 (Linux; Android 14; Pixel 8 Build/AP2A."
              + (240_000 + i)
              + ".004) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/129.0."
              + i
              + "."
              + (i * 7)
              + " Mobile Safari/537.36 session/"
              + java.util
                  .UUID
                  .nameUUIDFromBytes(new byte[] {(byte) i, (byte) (i >> 8)})
                  .toString()
                  .replace("-", "");
      assertThat(classifier.classify(agent, false))
          .isEqualTo(new UserAgentFacts("Chrome", "Android", "phone", ""));
    }
    assertThat(classifier.agentsParsed() - before).isLessThanOrEqualTo(1);
  }

  @Test
  void theSharedClassifierIsOneInstancePerJvm() {
    assertThat(UserAgentClassifier.shared()).isSameAs(classifier);
  }

  @Test
  void aRepeatedAgentGetsTheSameAnswerFromTheCache() {
    UserAgentFacts first = classifier.classify(SAMSUNG_TABLET, false);

    assertThat(classifier.classify(SAMSUNG_TABLET, false)).isSameAs(first);
    assertThat(classifier.classify(new String(SAMSUNG_TABLET.toCharArray()), false))
        .isEqualTo(first);
  }

  @Test
  void recentAgentsNeverHandsOneAgentAnotherAgentsAnswerOnACollision() {
    UserAgentClassifier.RecentAgents oneSlot = new UserAgentClassifier.RecentAgents(1);
    UserAgentFacts human = new UserAgentFacts("Chrome", "Windows", "desktop", "");

    oneSlot.put(CHROME_WINDOWS, human);
    assertThat(oneSlot.get(CHROME_WINDOWS)).isSameAs(human);
    assertThat(oneSlot.get("curl/8.5.0")).isNull();

    oneSlot.put("curl/8.5.0", UserAgentFacts.ofBot(BotKind.HTTP_CLIENT));
    assertThat(oneSlot.get(CHROME_WINDOWS)).isNull();
  }

  @Test
  void recentAgentsRefusesASizeThatIsNotAPowerOfTwo() {
    assertThatThrownBy(() -> new UserAgentClassifier.RecentAgents(1000))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("size must be a power of two, not 1000");
  }

  @Test
  void unknownBrowserAndOsNamesFallBackToOther() {
    assertThat(UserAgentClassifier.browser("Browser", "Netscape")).isEqualTo("Other");
    assertThat(UserAgentClassifier.os("PalmOS")).isEqualTo("Other");
    assertThat(UserAgentClassifier.device("Watch")).isEqualTo("other");
  }

  @Test
  void everyAnswerIsInItsFieldsListedVocabulary() {
    for (String agentName :
        new String[] {
          "Chrome",
          "Chromium",
          "Safari",
          "Edge",
          "SamsungBrowser",
          "Opera GX",
          "Firefox Focus",
          "Netscape"
        }) {
      assertThat(UserAgentClassifier.browser("Browser", agentName)).isIn(UserAgentFacts.BROWSERS);
    }
    assertThat(UserAgentClassifier.browser("Browser Webview", "Instagram"))
        .isIn(UserAgentFacts.BROWSERS);
    for (String osName :
        new String[] {
          "Windows NT", "Mac OS X", "iPadOS", "FireOS", "Chrome OS", "Ubuntu", "PalmOS"
        }) {
      assertThat(UserAgentClassifier.os(osName)).isIn(UserAgentFacts.OPERATING_SYSTEMS);
    }
    for (String deviceClass :
        new String[] {"Desktop", "Mobile", "eReader", "Set-top box", "Game Console", "Watch"}) {
      assertThat(UserAgentClassifier.device(deviceClass)).isIn(UserAgentFacts.DEVICES);
    }
    for (String agent :
        new String[] {
          CHROME_WINDOWS, SAFARI_IPHONE, SAMSUNG_TABLET, "curl/8.5.0", "Googlebot/2.1"
        }) {
      UserAgentFacts facts = classifier.classify(agent, false);
      assertThat(facts.browser()).isIn(UserAgentFacts.BROWSERS);
      assertThat(facts.os()).isIn(UserAgentFacts.OPERATING_SYSTEMS);
      assertThat(facts.device()).isIn(UserAgentFacts.DEVICES);
      assertThat(facts.botKind()).isIn(UserAgentFacts.BOT_KINDS);
    }
  }
}
