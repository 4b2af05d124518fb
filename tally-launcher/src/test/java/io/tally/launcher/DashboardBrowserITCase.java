package io.tally.launcher;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.File;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.Alert;
import org.openqa.selenium.By;
import org.openqa.selenium.Dimension;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.Select;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The dashboard in a real headless Chromium against the whole stack started as {@code ./tally up}
 * starts it: clicks from known clients, followed over HTTP, counted by the Flink job into
 * PostgreSQL, read by the stats API and drawn by the dashboard's own JavaScript, with the totals,
 * the chart data and every breakdown the classifier's answers for those clients; and a link made,
 * copied and disabled in the page, with the API's refusals shown as it words them. One stack serves
 * every test. Needs Debian's {@code chromium} and {@code chromium-driver}; it fails, rather than
 * skips, without them.
 */
class DashboardBrowserITCase {

  private static final Path CHROMIUM = Path.of("/usr/bin/chromium");
  private static final Path CHROMEDRIVER = Path.of("/usr/bin/chromedriver");
  private static final Path TARGET = Path.of("target").toAbsolutePath();
  private static final Path SCREENSHOTS = TARGET.resolve("screenshots");

  // The agents of UserAgentClassifierTest, so the expected families are the classifier's tested
  // answers: Chrome/Windows/desktop, Safari/iOS/phone, and Googlebot a crawler.
  private static final String CHROME_WINDOWS =
      "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko)"
          + " Chrome/131.0.0.0 Safari/537.36";
  private static final String SAFARI_IPHONE =
      "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like"
          + " Gecko) Version/17.5 Mobile/15E148 Safari/604.1";
  private static final String GOOGLEBOT =
      "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
  private static final String NEWS = "https://news.example.com/x";

  private static final long HUMAN_CLICKS = 9;
  private static final long BOT_CLICKS = 3;

  /**
   * Every request comes from 127.0.0.1, so each human agent is one visitor; bots are never
   * visitors.
   */
  private static final long VISITORS = 2;

  private static final Map<String, Map<String, Long>> BREAKDOWNS =
      Map.of(
          "browser", ordered("Chrome", 6, "Safari", 3),
          "device", ordered("desktop", 6, "phone", 3),
          "referrer", ordered("news.example.com", 6, "", 3),
          "bot_kind", ordered("crawler", 2, "head", 1),
          // The iPhone's clicks came on a tagged short URL; the others are in no campaign.
          "utm_source", Map.of("newsletter", 3L),
          // No GeoIP database and no country header in the stack: every human click's country is
          // unknown.
          "country", Map.of("unknown", HUMAN_CLICKS));

  private static final Duration PAGE_WAIT = Duration.ofSeconds(30);

  /** How long the page may take to show a click: the pipeline's lag plus a refresh or two. */
  private static final Duration CLICK_WAIT = Duration.ofSeconds(90);

  @TempDir static Path home;

  private static LocalStack stack;
  private static LinkClient client;

  @BeforeAll
  static void startStack() throws Exception {
    requireChromium();
    stack = LocalStack.start(settings());
    client = new LinkClient(stack.redirectUrl(), stack.apiKey());
    // The stack is up before the job's tasks run: a first click on a link of its own waits out
    // their start, so that the lags the tests measure are the pipeline's, not the job's deployment.
    long started = System.nanoTime();
    String warmUp = client.createLink("https://example.com/warm-up");
    client.follow(warmUp, 1);
    await()
        .atMost(Duration.ofSeconds(120))
        .pollInterval(Duration.ofMillis(250))
        .until(
            () ->
                client
                        .get("/api/links/" + warmUp + "/stats?from=1h&to=now")
                        .path("totals")
                        .path("clicks")
                        .asLong()
                    == 1);
    System.out.println("first-click-visible-after-start " + millisSince(started) + " ms");
  }

  @AfterAll
  static void stopStack() {
    if (stack != null) {
      stack.close();
    }
  }

  @Test
  void theDashboardShowsTheClicksOfKnownClientsAsTheStatsApiCountsThem() throws Exception {
    String code = client.createLink("https://example.com/dashboard-browser");

    client.follow(code, 6, CHROME_WINDOWS, NEWS, "GET");
    client.follow(code + "?utm_source=newsletter", 3, SAFARI_IPHONE, null, "GET");
    client.follow(code, 2, GOOGLEBOT, null, "GET");
    client.follow(code, 1, CHROME_WINDOWS, null, "HEAD");
    long lastClick = System.nanoTime();

    // The open minute fires early, so the totals show within seconds; the bound leaves room for a
    // slow start.
    await()
        .atMost(Duration.ofSeconds(90))
        .pollInterval(Duration.ofMillis(100))
        .until(() -> totalsShown(client, code));
    System.out.println(
        "click-to-visible "
            + millisSince(lastClick)
            + " ms (stats API totals clicks="
            + HUMAN_CLICKS
            + " bot_clicks="
            + BOT_CLICKS
            + ")");
    // An open hour and day, and their breakdowns, are written every half minute: wait for them
    // too, so that what the browser is asserted on below is complete when the page loads.
    await()
        .atMost(Duration.ofSeconds(60))
        .pollInterval(Duration.ofMillis(250))
        .until(() -> everythingShown(client, code));
    System.out.println(
        "all-aggregates-visible "
            + millisSince(lastClick)
            + " ms (visitors, daily totals, breakdowns)");

    try (Browser browser = Browser.start()) {
      checkDashboard(browser, stack.redirectUrl(), stack.apiKey(), code);
    }
  }

  @Test
  void aLinkMadeInThePageRedirectsShowsItsClickAndIsDisabledThere() throws Exception {
    String code = "made-in-the-page";
    String target = "https://example.com/made-in-the-page";
    try (Browser browser = Browser.start()) {
      WebDriver driver = browser.driver();
      driver.get(stack.redirectUrl() + "/dashboard/");
      signIn(browser, stack.apiKey());

      submitNewLink(driver, target, code);
      waitForView(browser, "link");
      String shortUrl = browser.waitUntil(d -> nonBlank(text(d, "link-short-url")));
      assertThat(shortUrl)
          .as("the short URL shown, as the API gives it")
          .isEqualTo(client.get("/api/links/" + code).path("short_url").asText());
      assertThat(text(driver, "created-notice")).startsWith("Link created.");
      checkCopy(browser, shortUrl);

      HttpResponse<Void> followed = client.open(shortUrl);
      assertThat(followed.statusCode()).as("the short URL read from the page").isEqualTo(302);
      assertThat(followed.headers().firstValue("Location")).hasValue(target);
      long clicked = System.nanoTime();
      driver.findElement(By.cssSelector("label[for=range-1h]")).click();
      browser.waitUntil(CLICK_WAIT, d -> "1".equals(dataValue(d, "total-clicks")));
      System.out.println("click-shown-in-page-after " + millisSince(clicked) + " ms");
      browser.screenshot("dashboard-link-made.png");

      driver.findElement(By.cssSelector(".crumbs a")).click();
      waitForView(browser, "links");
      String elsewhere = "https://example.com/elsewhere";
      assertThat(createRefusedInPage(browser, elsewhere, code))
          .as("a taken code")
          .isEqualTo(client.refusedCreate(elsewhere, code, stack.apiKey(), 409));
      assertThat(client.get("/api/links/" + code).path("url").asText())
          .as("the taken code's link is left as it was")
          .isEqualTo(target);
      String script = "javascript:alert(1)";
      assertThat(createRefusedInPage(browser, script, ""))
          .as("a URL the API will not redirect to")
          .isEqualTo(client.refusedCreate(script, null, stack.apiKey(), 400));
      assertThat(
              driver.findElement(By.cssSelector("[data-testid=new-url]")).getDomProperty("value"))
          .as("a refused form is kept as typed")
          .isEqualTo(script);

      browser.script("sessionStorage.setItem('tally.apiKey', 'not-the-key');");
      assertThat(keyRefusedInPage(browser, elsewhere))
          .as("a wrong key")
          .isEqualTo(client.refusedCreate(elsewhere, null, "not-the-key", 403));
      signIn(browser, stack.apiKey());
      browser.script("sessionStorage.removeItem('tally.apiKey');");
      assertThat(keyRefusedInPage(browser, elsewhere))
          .as("no key")
          .isEqualTo(client.refusedCreate(elsewhere, null, null, 401));
      signIn(browser, stack.apiKey());

      driver
          .findElement(By.cssSelector("[data-testid=link-row][data-code='" + code + "'] td.code a"))
          .click();
      waitForView(browser, "link");
      String corrected = "https://example.com/made-in-the-page/corrected";
      browser.waitUntil(d -> displayed(d, "edit-link")).click();
      WebElement newTarget = browser.waitUntil(d -> displayed(d, "edit-url"));
      newTarget.clear();
      newTarget.sendKeys(corrected);
      driver.findElement(By.cssSelector("[data-testid=edit-tags]")).sendKeys("launch, q4.ads");
      driver.findElement(By.cssSelector("[data-testid=edit-submit]")).click();
      browser.waitUntil(d -> corrected.equals(text(d, "link-url")));
      assertThat(
              driver.findElements(By.cssSelector("[data-testid=link-tag]")).stream()
                  .map(WebElement::getText)
                  .toList())
          .containsExactly("launch", "q4.ads");
      assertThat(client.get("/api/links/" + code).path("tags").toString())
          .as("the tags the API keeps, read with the key")
          .isEqualTo("[\"launch\",\"q4.ads\"]");
      assertThat(client.open(shortUrl).headers().firstValue("Location"))
          .as("the next redirect after the change made in the page")
          .hasValue(corrected);

      driver.findElement(By.cssSelector(".crumbs a")).click();
      waitForView(browser, "links");
      browser.waitUntil(
          d ->
              !d.findElements(By.cssSelector("[data-testid=tag-total][data-tag='q4.ads']"))
                  .isEmpty());
      driver
          .findElement(By.cssSelector("[data-testid=link-row][data-code='" + code + "'] td.code a"))
          .click();
      waitForView(browser, "link");
      browser.waitUntil(d -> displayed(d, "disable-link")).click();
      Alert question = browser.waitUntil(ExpectedConditions.alertIsPresent());
      assertThat(question.getText()).contains(code);
      question.dismiss();
      assertThat(client.get("/api/links/" + code).has("disabled_at"))
          .as("a dismissed question leaves the link enabled")
          .isFalse();
      assertThat(client.open(shortUrl).statusCode()).isEqualTo(302);

      browser.waitUntil(d -> displayed(d, "disable-link")).click();
      browser.waitUntil(ExpectedConditions.alertIsPresent()).accept();
      browser.waitUntil(
          d ->
              !d.findElements(By.cssSelector(".link-head [data-testid=disabled-badge]")).isEmpty());
      assertThat(driver.findElement(By.cssSelector("[data-testid=disable-link]")).isDisplayed())
          .as("a disabled link offers no Disable button")
          .isFalse();
      assertThat(client.open(shortUrl).statusCode())
          .as("the short URL of a link disabled in the page")
          .isEqualTo(410);
      browser.screenshot("dashboard-link-disabled.png");
    }
  }

  @Test
  void aReadOnlyKeySeesThePagesWithoutTheFormsThatChangeLinks() throws Exception {
    String code = client.createLink("https://example.com/read-only");
    try (Browser browser = Browser.start()) {
      WebDriver driver = browser.driver();
      driver.get(stack.redirectUrl() + "/dashboard/#/link/" + code);
      WebElement input = browser.waitUntil(d -> displayed(d, "api-key-input"));
      input.sendKeys(stack.readApiKey());
      driver.findElement(By.cssSelector("[data-testid=api-key-submit]")).click();
      waitForView(browser, "link");
      String shortUrl = browser.waitUntil(d -> nonBlank(text(d, "link-short-url")));
      assertThat(shortUrl).endsWith("/" + code);
      assertThat(displayed(driver, "disable-link")).as("the Disable button").isNull();
      assertThat(displayed(driver, "edit-link")).as("the Edit button").isNull();

      driver.findElement(By.cssSelector(".crumbs a")).click();
      waitForView(browser, "links");
      assertThat(displayed(driver, "links-table")).as("the links").isNotNull();
      assertThat(displayed(driver, "create-form")).as("the form that creates a link").isNull();

      driver.findElement(By.cssSelector("[data-testid=sign-out]")).click();
      signIn(browser, stack.apiKey());
      assertThat(displayed(driver, "create-form")).as("the write key's form").isNotNull();
    }
  }

  private void checkDashboard(Browser browser, String baseUrl, String apiKey, String code)
      throws IOException {
    WebDriver driver = browser.driver();
    driver.get(baseUrl + "/dashboard/");
    signIn(browser, apiKey);

    WebElement linkRow =
        driver.findElement(By.cssSelector("[data-testid=link-row][data-code='" + code + "']"));
    assertThat(linkRow.findElement(By.cssSelector("[data-testid=link-clicks]")).getText())
        .as("all-time human clicks in the links list")
        .isEqualTo(String.valueOf(HUMAN_CLICKS));
    WebElement top =
        browser.waitUntil(
            d ->
                d
                    .findElements(
                        By.cssSelector("[data-testid=top-link][data-code='" + code + "']"))
                    .stream()
                    .findFirst()
                    .orElse(null));
    assertThat(top.getDomAttribute("data-clicks"))
        .as("the link among the top links")
        .isEqualTo(String.valueOf(HUMAN_CLICKS));
    browser.screenshot("dashboard-links.png");

    // The row's code is the link to the link's page (the row itself has no click handler).
    linkRow.findElement(By.cssSelector("td.code a")).click();
    waitForView(browser, "link");
    driver.findElement(By.cssSelector("label[for=range-1h]")).click();
    assertThat(driver.findElement(By.id("range-1h")).isSelected()).isTrue();
    waitForView(browser, "link");
    browser.waitUntil(d -> String.valueOf(HUMAN_CLICKS).equals(dataValue(d, "total-clicks")));

    assertThat(dataValue(driver, "total-clicks")).isEqualTo(String.valueOf(HUMAN_CLICKS));
    assertThat(dataValue(driver, "total-bot-clicks")).isEqualTo(String.valueOf(BOT_CLICKS));
    assertThat(dataValue(driver, "total-visitors")).isEqualTo(String.valueOf(VISITORS));
    WebElement change = driver.findElement(By.cssSelector("[data-testid=total-clicks-change]"));
    assertThat(change.getDomAttribute("data-change"))
        .as("the clicks against the hour before, when the new link had none")
        .isEqualTo("new");
    assertThat(change.getText()).isEqualTo("new: none in the 1 h before");
    assertThat(
            driver
                .findElement(By.cssSelector("[data-testid=total-visitors-change]"))
                .getDomAttribute("data-change"))
        .as("an hour's visitors are counted over the UTC day, as the hour before's: no change")
        .isEqualTo("overlap");

    @SuppressWarnings("unchecked")
    Map<String, Object> chart =
        (Map<String, Object>) browser.script("return window.tallyChartData;");
    assertThat(chart).as("the chart's data").isNotNull();
    assertThat(chart.get("interval"))
        .as("1 h at the auto interval is per minute")
        .isEqualTo("minute");
    assertThat((List<?>) chart.get("clicks")).hasSizeBetween(60, 61);
    assertThat(sum(chart.get("clicks"))).as("clicks in the chart").isEqualTo(HUMAN_CLICKS);
    assertThat(sum(chart.get("bot_clicks"))).as("bot clicks in the chart").isEqualTo(BOT_CLICKS);
    List<?> statuses = (List<?>) chart.get("status");
    assertThat(statuses.get(statuses.size() - 1))
        .as("the open minute is provisional")
        .isEqualTo("provisional");
    assertThat(statuses).allMatch(s -> s.equals("final") || s.equals("provisional"));
    assertThat(
            driver.findElement(By.cssSelector("[data-testid=series-chart]")).getSize().getHeight())
        .as("the chart is drawn")
        .isGreaterThan(100);

    for (Map.Entry<String, Map<String, Long>> expected : BREAKDOWNS.entrySet()) {
      assertThat(breakdown(driver, expected.getKey()))
          .as("breakdown by %s", expected.getKey())
          .containsExactlyEntriesOf(expected.getValue());
    }
    assertThat(
            driver
                .findElement(
                    By.cssSelector(
                        "[data-testid=breakdown-referrer]"
                            + " [data-testid=breakdown-row][data-value='']"))
                .getText())
        .as("a click without a referrer is shown as direct")
        .startsWith("(direct)");
    assertThat(
            driver
                .findElement(
                    By.cssSelector("[data-testid=breakdown-country] [data-testid=breakdown-row]"))
                .getText())
        .as("an unresolved country is shown as unknown, not as a country's name")
        .startsWith("(unknown)");

    WebElement fresh = driver.findElement(By.cssSelector("[data-testid=fresh-until]"));
    assertThat(fresh.isDisplayed()).isTrue();
    assertThat(fresh.getText())
        .matches(
            "Counts final up to \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d UTC, .*"
                + "|No minute closed yet: .*");
    System.out.println("fresh-until line: " + fresh.getText());

    // The ledger reads the hour rows, which the job writes beside the minutes.
    browser.waitUntil(d -> String.valueOf(HUMAN_CLICKS).equals(dataValue(d, "ledger-clicks")));
    assertThat(dataValue(driver, "ledger-bot-clicks")).isEqualTo(String.valueOf(BOT_CLICKS));
    assertThat(dataValue(driver, "ledger-duplicates")).as("no copy was sent").isEqualTo("0");
    assertThat(dataValue(driver, "ledger-producer-drops")).isEqualTo("0");
    assertThat(driver.findElement(By.cssSelector("[data-testid=ledger-span]")).getText())
        .startsWith("Whole UTC hours ");

    browser.fitPageHeight();
    browser.screenshot("dashboard-link.png");

    // Another zone: the chart's buckets are New York's, named as such, and hold the same clicks.
    Select zone = new Select(driver.findElement(By.cssSelector("[data-testid=tz-select]")));
    String browserZone = zone.getFirstSelectedOption().getDomAttribute("value");
    zone.selectByValue("America/New_York");
    browser.waitUntil(
        d -> {
          Object tz = browser.script("return window.tallyChartData && window.tallyChartData.tz;");
          return "America/New_York".equals(tz) ? tz : null;
        });
    @SuppressWarnings("unchecked")
    Map<String, Object> newYork =
        (Map<String, Object>) browser.script("return window.tallyChartData;");
    assertThat(sum(newYork.get("clicks")))
        .as("clicks in New York's minutes")
        .isEqualTo(HUMAN_CLICKS);
    assertThat(text(driver, "interval-shown")).endsWith("America/New_York");
    assertThat(displayed(driver, "approximate-note"))
        .as("New York's minutes are exact: no approximation to report")
        .isNull();
    zone.selectByValue(browserZone);
    browser.waitUntil(
        d -> {
          Object tz = browser.script("return window.tallyChartData.tz;");
          return browserZone.equals(tz) ? tz : null;
        });

    // Over a week the visitors are the union of the day sketches the job wrote: the same people,
    // each counted once, over the whole UTC days the range touches, and no caveat under them.
    driver.findElement(By.cssSelector("label[for=range-7d]")).click();
    waitForView(browser, "link");
    WebElement span =
        browser.waitUntil(
            d -> {
              WebElement caption = d.findElement(By.cssSelector("[data-testid=visitors-span]"));
              return caption.getText().startsWith("UTC days ") ? caption : null;
            });
    assertThat(dataValue(driver, "total-visitors"))
        .as("unique visitors over 7 days, from the day sketches")
        .isEqualTo(String.valueOf(VISITORS));
    assertThat(span.getDomAttribute("data-from")).endsWith("T00:00:00Z");
    assertThat(driver.findElement(By.cssSelector("[data-testid=visitors-note]")).isDisplayed())
        .as("no caveat under the range's visitors")
        .isFalse();
  }

  /**
   * Signs in on the key form the page shows, whether or not it shows a refusal, and waits for the
   * links it then opens.
   */
  private static void signIn(Browser browser, String apiKey) {
    WebElement input = browser.waitUntil(d -> displayed(d, "api-key-input"));
    input.clear();
    input.sendKeys(apiKey);
    browser.driver().findElement(By.cssSelector("[data-testid=api-key-submit]")).click();
    waitForView(browser, "links");
  }

  private static void submitNewLink(WebDriver driver, String url, String code) {
    WebElement urlInput = driver.findElement(By.cssSelector("[data-testid=new-url]"));
    urlInput.clear();
    urlInput.sendKeys(url);
    WebElement codeInput = driver.findElement(By.cssSelector("[data-testid=new-code]"));
    codeInput.clear();
    codeInput.sendKeys(code);
    driver.findElement(By.cssSelector("[data-testid=new-submit]")).click();
  }

  /** Submits a link the API refuses and returns the error the form then shows. */
  private static String createRefusedInPage(Browser browser, String url, String code) {
    submitNewLink(browser.driver(), url, code);
    return browser.waitUntil(d -> displayed(d, "create-error")).getText();
  }

  /**
   * Submits a link with a key the API refuses and returns the error the key form then shows: the
   * page cannot go on without another key.
   */
  private static String keyRefusedInPage(Browser browser, String url) {
    submitNewLink(browser.driver(), url, "");
    waitForState(browser, "auth error");
    return browser.driver().findElement(By.cssSelector("[data-testid=auth-error]")).getText();
  }

  /**
   * The Copy button puts the short URL on the clipboard, or, where the page has none (served over
   * plain http from another host), selects it for the user to copy.
   */
  private static void checkCopy(Browser browser, String shortUrl) {
    By copy = By.cssSelector("[data-testid=copy-short-url]");
    browser.driver().findElement(copy).click();
    String outcome =
        browser.waitUntil(
            d ->
                d.findElement(By.cssSelector("[data-testid=copy-note]"))
                    .getDomAttribute("data-outcome"));
    System.out.println("copy-with-clipboard-available " + outcome);
    if (!outcome.equals("clipboard")) {
      assertThat(browser.script("return window.getSelection().toString();")).isEqualTo(shortUrl);
    }

    browser.script(
        "window.getSelection().removeAllRanges();"
            + " Object.defineProperty(navigator, 'clipboard', {value: undefined, configurable:"
            + " true});");
    browser.driver().findElement(copy).click();
    browser.waitUntil(
        d -> shortUrl.equals(browser.script("return window.getSelection().toString();")));
    assertThat(text(browser.driver(), "copy-note")).contains("Ctrl+C");
  }

  private static WebElement displayed(WebDriver driver, String testid) {
    List<WebElement> found = driver.findElements(By.cssSelector("[data-testid=" + testid + "]"));
    return found.isEmpty() || !found.get(0).isDisplayed() ? null : found.get(0);
  }

  private static String text(WebDriver driver, String testid) {
    return driver.findElement(By.cssSelector("[data-testid=" + testid + "]")).getText();
  }

  private static String nonBlank(String text) {
    return text == null || text.isBlank() ? null : text;
  }

  private static void waitForState(Browser browser, String viewAndState) {
    browser.waitUntil(
        d ->
            viewAndState.equals(
                browser.script(
                    "return document.body.dataset.view + ' ' + document.body.dataset.state;")));
  }

  /**
   * Waits until the dashboard shows {@code view} and has finished loading; fails on its error
   * message.
   */
  private static void waitForView(Browser browser, String view) {
    browser.waitUntil(
        d -> {
          Object state =
              browser.script(
                  "return document.body.dataset.view + ' ' + document.body.dataset.state;");
          if ((view + " error").equals(state)) {
            fail(
                "the dashboard's "
                    + view
                    + " view shows an error: "
                    + d.findElement(By.tagName("main")).getText());
          }
          return (view + " ready").equals(state);
        });
  }

  private static boolean totalsShown(LinkClient client, String code) throws Exception {
    JsonNode totals = client.get("/api/links/" + code + "/stats?from=1h&to=now").path("totals");
    return totals.path("clicks").asLong() == HUMAN_CLICKS
        && totals.path("bot_clicks").asLong() == BOT_CLICKS;
  }

  private static boolean everythingShown(LinkClient client, String code) throws Exception {
    JsonNode hour = client.get("/api/links/" + code + "/stats?from=1h&to=now").path("totals");
    JsonNode day =
        client.get("/api/links/" + code + "/stats?from=24h&to=now&interval=day").path("totals");
    if (hour.path("visitors").asLong() != VISITORS || day.path("clicks").asLong() != HUMAN_CLICKS) {
      return false;
    }
    for (Map.Entry<String, Map<String, Long>> expected : BREAKDOWNS.entrySet()) {
      Map<String, Long> values = new LinkedHashMap<>();
      for (JsonNode v :
          client
              .get(
                  "/api/links/"
                      + code
                      + "/breakdown?dimension="
                      + expected.getKey()
                      + "&from=1h&to=now")
              .path("values")) {
        values.put(v.path("value").asText(), v.path("clicks").asLong());
      }
      if (!values.equals(expected.getValue())) {
        return false;
      }
    }
    return true;
  }

  /** A breakdown table's rows as the page shows them: value to clicks, in the page's order. */
  /**
   * A breakdown card's rows; the campaign tags share one card, which shows {@code utm_source} until
   * another tag is picked.
   */
  private static Map<String, Long> breakdown(WebDriver driver, String dimension) {
    String card = dimension.startsWith("utm_") ? "campaign" : dimension;
    Map<String, Long> rows = new LinkedHashMap<>();
    for (WebElement row :
        driver.findElements(
            By.cssSelector("[data-testid=breakdown-" + card + "] [data-testid=breakdown-row]"))) {
      rows.put(
          row.getDomAttribute("data-value"), Long.parseLong(row.getDomAttribute("data-clicks")));
    }
    return rows;
  }

  private static String dataValue(WebDriver driver, String testid) {
    return driver
        .findElement(By.cssSelector("[data-testid=" + testid + "]"))
        .getDomAttribute("data-value");
  }

  private static long sum(Object series) {
    return ((List<?>) series)
        .stream().mapToLong(n -> n == null ? 0 : ((Number) n).longValue()).sum();
  }

  private static Map<String, Long> ordered(
      String first, long firstClicks, String second, long secondClicks) {
    Map<String, Long> map = new LinkedHashMap<>();
    map.put(first, firstClicks);
    map.put(second, secondClicks);
    return map;
  }

  private static long millisSince(long nanoTime) {
    return (System.nanoTime() - nanoTime) / 1_000_000;
  }

  private static void requireChromium() {
    for (Path binary : List.of(CHROMIUM, CHROMEDRIVER)) {
      if (!Files.isExecutable(binary)) {
        fail(
            binary
                + " is missing: this test drives Debian's Chromium through its chromedriver."
                + " Install both with: apt-get install -y chromium chromium-driver");
      }
    }
  }

  private static StackSettings settings() {
    return new StackSettings(
        home,
        0,
        0,
        0,
        0,
        PortRange.ANY,
        Optional.empty(),
        "postgres",
        "",
        Optional.of("test-api-key-0123456789abcdefghijklm"));
  }

  /**
   * Headless Chromium driven through Debian's chromedriver, with a fresh profile; closing quits
   * both.
   */
  private record Browser(ChromeDriverService service, ChromeDriver driver, Path profile)
      implements AutoCloseable {

    static Browser start() throws IOException {
      Files.createDirectories(TARGET);
      Path profile = Files.createTempDirectory(TARGET, "chromium-profile-");
      // An explicit driver executable (and browser binary) means Selenium Manager is never run, so
      // nothing is looked up or downloaded.
      ChromeDriverService service =
          new ChromeDriverService.Builder()
              .usingDriverExecutable(CHROMEDRIVER.toFile())
              .usingAnyFreePort()
              .withLogFile(TARGET.resolve("chromedriver.log").toFile())
              .build();
      ChromeOptions options = new ChromeOptions();
      options.setBinary(CHROMIUM.toString());
      options.addArguments(
          "--headless=new",
          "--no-sandbox",
          "--disable-gpu",
          "--no-first-run",
          "--disable-background-networking",
          "--disable-component-update",
          "--disable-sync",
          "--window-size=1400,1000",
          "--user-data-dir=" + profile);
      try {
        return new Browser(service, new ChromeDriver(service, options), profile);
      } catch (RuntimeException | Error e) {
        service.close();
        throw e;
      }
    }

    <T> T waitUntil(java.util.function.Function<WebDriver, T> condition) {
      return waitUntil(PAGE_WAIT, condition);
    }

    <T> T waitUntil(Duration timeout, java.util.function.Function<WebDriver, T> condition) {
      return new WebDriverWait(driver, timeout, Duration.ofMillis(100)).until(condition::apply);
    }

    Object script(String js) {
      return ((JavascriptExecutor) driver).executeScript(js);
    }

    /** Grows the window to the page's full height, so one screenshot shows all of it. */
    void fitPageHeight() {
      // The window's height includes the browser's own frame, which the page does not get.
      long height =
          ((Number)
                  script(
                      "return document.documentElement.scrollHeight + window.outerHeight -"
                          + " window.innerHeight;"))
              .longValue();
      driver.manage().window().setSize(new Dimension(1400, (int) Math.min(height, 6000)));
      // Chart.js redraws on resize in the next animation frame; two frames leave it drawn.
      ((JavascriptExecutor) driver)
          .executeAsyncScript(
              "const done = arguments[0]; requestAnimationFrame(() => requestAnimationFrame(() =>"
                  + " done()));");
    }

    void screenshot(String name) throws IOException {
      Files.createDirectories(SCREENSHOTS);
      File shot = driver.getScreenshotAs(OutputType.FILE);
      Files.copy(shot.toPath(), SCREENSHOTS.resolve(name), StandardCopyOption.REPLACE_EXISTING);
    }

    @Override
    public void close() {
      try {
        driver.quit();
      } finally {
        service.close();
        deleteQuietly(profile);
      }
    }

    private static void deleteQuietly(Path dir) {
      try (Stream<Path> paths = Files.walk(dir)) {
        paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      } catch (IOException e) {
        // A profile left behind under target/ is harmless; the next build's clean removes it.
      }
    }
  }
}
