package io.tally.testing;

import io.tally.event.ClickEvent;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The clients whose clicks tests, benchmarks and fault scenarios make, each with what its click
 * must count as. The answers are written here by hand, from what each agent plainly is, and never
 * asked of the product's classifier: the oracle ({@link ClickOracle}) would otherwise agree with
 * any mistake the classifier made. The classifier's own tests check it against this table.
 */
public final class Clients {

  /** A user agent and what a click from it counts as. */
  public record Client(String userAgent, ClickOracle.Facts facts) {}

  /** People's browsers on their usual devices. */
  public static final List<Client> PEOPLE =
      List.of(
          person(ClickEvents.DESKTOP_BROWSER, "Chrome", "Windows", "desktop"),
          person(
              "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML,"
                  + " like Gecko) Version/18.1 Mobile/15E148 Safari/604.1",
              "Safari",
              "iOS",
              "phone"),
          person(
              "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0",
              "Firefox",
              "Linux",
              "desktop"),
          person(
              "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko)"
                  + " Chrome/131.0.0.0 Mobile Safari/537.36",
              "Chrome",
              "Android",
              "phone"),
          person(
              "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko)"
                  + " Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0",
              "Edge",
              "Windows",
              "desktop"),
          person(
              "Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko)"
                  + " SamsungBrowser/26.0 Chrome/122.0.0.0 Mobile Safari/537.36",
              "Samsung Internet",
              "Android",
              "phone"));

  /** Bots of each kind the read side tells apart. */
  public static final List<Client> BOTS =
      List.of(
          bot(
              "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
              "crawler"),
          bot("curl/8.5.0", "http-client"),
          bot(
              "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)",
              "preview"),
          bot("Mozilla/5.0+(compatible; UptimeRobot/2.0; http://www.uptimerobot.com/)", "monitor"));

  private static final Map<String, ClickOracle.Facts> BY_AGENT = new HashMap<>();

  static {
    PEOPLE.forEach(c -> BY_AGENT.put(c.userAgent(), c.facts()));
    BOTS.forEach(c -> BY_AGENT.put(c.userAgent(), c.facts()));
  }

  private Clients() {}

  /**
   * What the tables must show of an event's client: a {@code HEAD} request is a bot's whatever its
   * agent, one without an agent an HTTP client's, a version-1 event brings its own verdict and
   * browser, and any other agent must be one of this table's, or begin with one of them and a
   * space.
   */
  public static ClickOracle.Facts facts(ClickEvent event) {
    if (event.v1() != null) {
      return event.v1().bot()
          ? new ClickOracle.Facts("unclassified", event.v1().uaFamily(), "Other", "bot")
          : new ClickOracle.Facts("", event.v1().uaFamily(), "Other", "other");
    }
    if (event.head()) {
      return botFacts("head");
    }
    if (event.burst()) {
      return botFacts("burst");
    }
    if (event.userAgent().isBlank()) {
      // A browser always sends an agent; a request without one comes from a program.
      return botFacts("http-client");
    }
    ClickOracle.Facts facts = BY_AGENT.get(event.userAgent());
    if (facts != null) {
      return facts;
    }
    // Words after a client's whole agent (an app's suffix, a stretched header) change no answer;
    // the longest such agent is the client (Edge's agent is Chrome's and more).
    String longest = null;
    for (String agent : BY_AGENT.keySet()) {
      if (event.userAgent().startsWith(agent + " ")
          && (longest == null || agent.length() > longest.length())) {
        longest = agent;
      }
    }
    if (longest != null) {
      return BY_AGENT.get(longest);
    }
    throw new IllegalArgumentException("no client of the table sends '" + event.userAgent() + "'");
  }

  /**
   * What the tables must show of an event's client when the job is told to count agents containing
   * any of {@code crawlerAgents} (lower case) as crawlers: a crawler's facts for those, unless it
   * was a {@code HEAD} request or a version-1 event, else {@link #facts(ClickEvent)}.
   */
  public static ClickOracle.Facts facts(ClickEvent event, List<String> crawlerAgents) {
    if (event.v1() == null && !event.head() && !event.burst()) {
      String agent = event.userAgent().toLowerCase(Locale.ROOT);
      if (crawlerAgents.stream().anyMatch(agent::contains)) {
        return botFacts("crawler");
      }
    }
    return facts(event);
  }

  private static Client person(String userAgent, String browser, String os, String device) {
    return new Client(userAgent, new ClickOracle.Facts("", browser, os, device));
  }

  private static Client bot(String userAgent, String kind) {
    return new Client(userAgent, botFacts(kind));
  }

  private static ClickOracle.Facts botFacts(String kind) {
    return new ClickOracle.Facts(kind, "Other", "Other", "bot");
  }
}
