package io.tally.counting.classify;

import com.github.benmanes.caffeine.cache.Caffeine;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.regex.Pattern;
import nl.basjes.parse.useragent.UserAgent;
import nl.basjes.parse.useragent.UserAgentAnalyzer;

/**
 * Tells a person's click from a bot's by the request's user agent and method, and reduces a
 * person's agent to browser, os and device families ({@link UserAgentFacts}).
 *
 * <p>Order of the checks: a HEAD request is a bot whatever its agent; a blank agent is an HTTP
 * client; agents are cut to {@value #MAX_AGENT_LENGTH} characters, so that a hostile one costs no
 * more than a long real one, and reduced to what the answer depends on ({@link AgentReduction}), so
 * that agents differing only in build numbers or random tokens share one answer; then explicit
 * rules on the lower-cased agent for link-preview fetchers, monitors, HTTP clients and crawlers
 * (they name the kind, which Yauaa does not, and spare it a parse); then Yauaa, whose robot, hacker
 * and cloud classes make a crawler, and so does an agent whose device it cannot tell.
 *
 * <p>The Yauaa analyzer holds over a hundred MiB of matchers and takes seconds to build, so a JVM
 * keeps one, {@link #shared()}, for every Flink subtask in it: get it in {@code open()}, never keep
 * it in a field that Flink serializes. It is thread-safe. Two caches keep subtasks from queueing on
 * it: whole answers for the last agents seen ({@value #RECENT_AGENTS} slots, which skip the rules
 * too), and behind them Yauaa's own ({@value #CACHE_SIZE} agents), because Yauaa parses one
 * uncached agent at a time per analyzer.
 */
public final class UserAgentClassifier {

  /**
   * Longer agents are cut to this many characters before any check; real browsers stay far below
   * it.
   */
  public static final int MAX_AGENT_LENGTH = 512;

  /**
   * Distinct agents whose Yauaa result is kept (Yauaa's own default); a miss costs a parse of about
   * a millisecond.
   */
  static final int CACHE_SIZE = 10_000;

  /** Slots of the cache of whole answers in front of the rules and Yauaa; a power of two. */
  static final int RECENT_AGENTS = 16_384;

  private static final UserAgentFacts HEAD = UserAgentFacts.ofBot(BotKind.HEAD);
  private static final UserAgentFacts CRAWLER = UserAgentFacts.ofBot(BotKind.CRAWLER);
  private static final UserAgentFacts HTTP_CLIENT = UserAgentFacts.ofBot(BotKind.HTTP_CLIENT);

  /**
   * Fragments of the lower-cased agent, by kind, checked in this order: a preview fetcher that
   * names the HTTP library it uses (LinkedIn's names Apache-HttpClient) is still a preview fetcher,
   * and a monitor that calls itself a bot is still a monitor.
   */
  private static final List<Rule> RULES =
      List.of(
          Rule.of(
              BotKind.PREVIEW,
              List.of(
                  "facebookexternalhit",
                  "facebot",
                  "meta-externalfetcher",
                  "slackbot",
                  "slack-imgproxy",
                  "twitterbot",
                  "discordbot",
                  "telegrambot",
                  "linkedinbot",
                  "embedly",
                  "pinterestbot",
                  "pinterest/0.",
                  "redditbot",
                  "applebot",
                  "iframely",
                  "mastodon/",
                  "vkshare",
                  "google-pagerenderer",
                  "bluesky",
                  "kakaotalk-scrap",
                  "flipboardproxy",
                  "whatsapp/",
                  "onebox",
                  "steamchaturllookup",
                  "github-camo",
                  "googleimageproxy",
                  // SkypeUriPreview, BingPreview, Snap URL Preview, Chatwork LinkPreview and the
                  // like
                  "preview"),
              List.of()),
          Rule.of(
              BotKind.MONITOR,
              List.of(
                  "pingdom",
                  "statuscake",
                  "site24x7",
                  "datadog",
                  "newrelic",
                  "better stack",
                  "hetrixtools",
                  "freshping",
                  "updown.io",
                  "checkly",
                  "nodeping",
                  "catchpoint",
                  "ruxitsynthetic",
                  "synthetics",
                  "kube-probe",
                  "elb-healthchecker",
                  "googlehc/",
                  "health-check",
                  "healthcheck",
                  "check_http/",
                  "zabbix",
                  "monitis",
                  "cronitor",
                  "thousandeyes",
                  "solarwinds",
                  "panopta",
                  "server density",
                  "blackbox exporter",
                  "appinsights",
                  "gtmetrix",
                  "chrome-lighthouse",
                  "dareboost",
                  "keycdn-tools",
                  "silktide",
                  "watchful",
                  // UptimeRobot, Better Uptime, Uptime Kuma; internetVista monitor, Dotcom-Monitor
                  // and the like
                  "uptime",
                  "monitor"),
              List.of()),
          Rule.of(
              BotKind.HTTP_CLIENT,
              List.of(
                  "curl/",
                  "wget/",
                  "python-requests",
                  "python-urllib",
                  "aiohttp/",
                  "python-httpx",
                  "httpx/",
                  "okhttp",
                  "axios/",
                  "node-fetch",
                  "undici",
                  "libwww-perl",
                  "lwp-",
                  "postmanruntime",
                  "httpie/",
                  "guzzlehttp",
                  "got (",
                  "reqwest/",
                  "insomnia/",
                  "restsharp",
                  "winhttp",
                  "powershell/",
                  "dart:io",
                  "faraday v",
                  "rest-client/",
                  "httpunit",
                  "jersey/",
                  "jetty/",
                  "colly/",
                  "pcore-http",
                  // Go-http-client, Java-http-client, Apache-HttpClient, "Mollie HTTP client" and
                  // the like
                  "http-client",
                  "httpclient",
                  "http client"),
              List.of("java/", "python/", "node/", "ruby", "php/", "perl/")),
          Rule.of(
                  BotKind.CRAWLER,
                  List.of(
                      "crawl",
                      "spider",
                      "scraper",
                      "scraping",
                      "headless",
                      "phantomjs",
                      "puppeteer",
                      "playwright",
                      "selenium",
                      "ghost inspector",
                      "httrack",
                      "webcopier",
                      "webcopy",
                      "webcapture",
                      "nikto",
                      "acunetix",
                      "netcraft",
                      "zgrab",
                      "nmap",
                      "sqlmap",
                      "masscan",
                      "censys",
                      "dcv/",
                      "dcv check",
                      "securityheaders",
                      "hardenize",
                      "google-",
                      "googleagent",
                      "meta-external",
                      "validator"),
                  List.of())
              .or(
                  // "bot" ending a word (Googlebot, CentComBot/1.0, robot) but not the phone brand
                  // Cubot; a web or mail address, which crawlers give for their owners and browsers
                  // never send.
                  "(?<!cu)bot(?![a-z])|https?://|\\+http|www\\.|[a-z0-9_.+-]@[a-z0-9-]+(?:\\.[a-z0-9-]+)*\\.[a-z]{2,}"));

  /**
   * Exact lower-cased agents of HTTP clients too short to name by a fragment (Node's built-in fetch
   * sends "node").
   */
  private static final Set<String> HTTP_CLIENT_AGENTS = Set.of("node", "-");

  private static final Set<String> ROBOT_DEVICE_CLASSES =
      Set.of("Robot", "Robot Mobile", "Robot Imitator", "Hacker", "Cloud");
  private static final Set<String> ROBOT_AGENT_CLASSES =
      Set.of("Robot", "Robot Mobile", "Hacker", "Cloud Application");

  private static final List<String> YAUAA_FIELDS =
      List.of(
          UserAgent.DEVICE_CLASS,
          UserAgent.AGENT_CLASS,
          UserAgent.AGENT_NAME,
          UserAgent.OPERATING_SYSTEM_NAME);

  private final UserAgentAnalyzer analyzer;
  private final RecentAgents recent = new RecentAgents(RECENT_AGENTS);
  private final LongAdder parsed = new LongAdder();

  private UserAgentClassifier(int cacheSize) {
    analyzer =
        UserAgentAnalyzer.newBuilder()
            .withFields(YAUAA_FIELDS)
            .withCache(cacheSize)
            // Yauaa picks a Caffeine cache only when its jar is read as multi-release; a shaded job
            // jar is not, and would fall back to one synchronized map for every subtask's cache
            // hits.
            .withCacheInstantiator(
                size ->
                    Caffeine.newBuilder()
                        .maximumSize(size)
                        .<String, UserAgent.ImmutableUserAgent>build()
                        .asMap())
            .withoutClientHintsCache()
            .withUserAgentMaxLength(MAX_AGENT_LENGTH)
            .hideMatcherLoadStats()
            .immediateInitialization()
            .build();
  }

  /**
   * The JVM's one classifier, built on first use (a few seconds); every later call returns the same
   * instance.
   */
  public static UserAgentClassifier shared() {
    return Shared.INSTANCE;
  }

  /**
   * Lazy, thread-safe initialisation by the class loader: the analyzer is built when this class is
   * first touched.
   */
  private static final class Shared {
    static final UserAgentClassifier INSTANCE = new UserAgentClassifier(CACHE_SIZE);
  }

  /**
   * Classifies one request.
   *
   * @param userAgent the User-Agent header, {@code null} when the request had none
   * @param head whether the request was an HTTP HEAD
   */
  public UserAgentFacts classify(String userAgent, boolean head) {
    if (head) {
      return HEAD;
    }
    if (userAgent == null || userAgent.isBlank()) {
      return HTTP_CLIENT;
    }
    String agent = AgentReduction.reduce(cut(userAgent.strip()));
    UserAgentFacts facts = recent.get(agent);
    if (facts == null) {
      facts = classifyUncached(agent);
      recent.put(agent, facts);
    }
    return facts;
  }

  /**
   * Agents handed to Yauaa since the JVM started, cached there or not: what the reduction and the
   * rules did not spare it.
   */
  public long agentsParsed() {
    return parsed.sum();
  }

  /** Classifies an agent already cut and reduced, without the cache of recent answers. */
  private UserAgentFacts classifyUncached(String agent) {
    String lower = agent.toLowerCase(Locale.ROOT);
    if (HTTP_CLIENT_AGENTS.contains(lower)) {
      return HTTP_CLIENT;
    }
    for (Rule rule : RULES) {
      if (rule.matches(lower)) {
        return rule.facts();
      }
    }
    this.parsed.increment();
    UserAgent parsed = analyzer.parse(agent);
    String deviceClass = parsed.getValue(UserAgent.DEVICE_CLASS);
    String osName = parsed.getValue(UserAgent.OPERATING_SYSTEM_NAME);
    // A browser always lets Yauaa tell its device; an agent it cannot place, or places in a data
    // centre, is a program, not a person clicking.
    if (ROBOT_DEVICE_CLASSES.contains(deviceClass)
        || ROBOT_AGENT_CLASSES.contains(parsed.getValue(UserAgent.AGENT_CLASS))
        || "Unknown".equals(deviceClass)
        || osName.endsWith("Cloud")) {
      return CRAWLER;
    }
    return new UserAgentFacts(
        browser(parsed.getValue(UserAgent.AGENT_CLASS), parsed.getValue(UserAgent.AGENT_NAME)),
        os(osName),
        device(deviceClass),
        "");
  }

  /** The first {@value #MAX_AGENT_LENGTH} characters, without splitting a surrogate pair. */
  static String cut(String agent) {
    if (agent.length() <= MAX_AGENT_LENGTH) {
      return agent;
    }
    int end =
        Character.isHighSurrogate(agent.charAt(MAX_AGENT_LENGTH - 1))
            ? MAX_AGENT_LENGTH - 1
            : MAX_AGENT_LENGTH;
    return agent.substring(0, end);
  }

  static String browser(String agentClass, String agentName) {
    if ("Browser Webview".equals(agentClass) || "Mobile App".equals(agentClass)) {
      return "In-App";
    }
    if (agentName.startsWith("Opera")) {
      return "Opera";
    }
    if (agentName.startsWith("Firefox")) {
      return "Firefox";
    }
    return switch (agentName) {
      case "Chrome", "Chromium" -> "Chrome";
      case "Safari" -> "Safari";
      case "Edge" -> "Edge";
      case "SamsungBrowser" -> "Samsung Internet";
      default -> UserAgentFacts.OTHER;
    };
  }

  static String os(String osName) {
    return switch (osName) {
      case "Windows NT", "Windows" -> "Windows";
      case "Mac OS", "Mac OS X", "macOS" -> "macOS";
      case "iOS", "iPadOS" -> "iOS";
      case "Android", "FireOS" -> "Android";
      case "Chrome OS", "ChromeOS" -> "ChromeOS";
      case "Linux",
          "Ubuntu",
          "Kubuntu",
          "Xubuntu",
          "Debian",
          "Fedora",
          "Fedora Linux",
          "Linux Mint",
          "CentOS",
          "Red Hat",
          "SUSE",
          "Gentoo Linux",
          "Mandriva Linux",
          "Slackware",
          "Mageia",
          "Raspbian",
          "Elementary OS" ->
          "Linux";
      default -> UserAgentFacts.OTHER;
    };
  }

  static String device(String deviceClass) {
    return switch (deviceClass) {
      case "Desktop" -> "desktop";
      case "Phone", "Mobile" -> "phone";
      case "Tablet", "eReader" -> "tablet";
      case "TV", "Set-top box" -> "tv";
      case "Game Console", "Handheld Game Console" -> "console";
      default -> "other";
    };
  }

  /**
   * The answers for recently seen agents, so that a repeated agent (most clicks) skips the rules,
   * which cost several microseconds, as well as Yauaa. Direct-mapped by hash: a slot holds the last
   * agent that hashed to it, a collision simply replaces it. Lock-free: slots are swapped whole, so
   * concurrent subtasks read either the old or the new entry, never a mix.
   */
  static final class RecentAgents {
    private record Entry(String agent, UserAgentFacts facts) {}

    private final AtomicReferenceArray<Entry> slots;
    private final int mask;

    RecentAgents(int size) {
      if (Integer.bitCount(size) != 1) {
        throw new IllegalArgumentException("size must be a power of two, not " + size);
      }
      slots = new AtomicReferenceArray<>(size);
      mask = size - 1;
    }

    /** The answer kept for this agent, or null. */
    UserAgentFacts get(String agent) {
      Entry entry = slots.get(slot(agent));
      return entry != null && entry.agent().equals(agent) ? entry.facts() : null;
    }

    void put(String agent, UserAgentFacts facts) {
      slots.set(slot(agent), new Entry(agent, facts));
    }

    private int slot(String agent) {
      int h = agent.hashCode();
      return (h ^ (h >>> 16)) & mask;
    }
  }

  /**
   * One kind's signs: fragments anywhere in the agent, fragments at its start only (where they are
   * too common elsewhere), and optionally a pattern.
   */
  private record Rule(
      UserAgentFacts facts, List<String> anywhere, List<String> atStart, Pattern pattern) {

    static Rule of(BotKind kind, List<String> anywhere, List<String> atStart) {
      return new Rule(UserAgentFacts.ofBot(kind), anywhere, atStart, null);
    }

    Rule or(String regex) {
      return new Rule(facts, anywhere, atStart, Pattern.compile(regex));
    }

    boolean matches(String lower) {
      for (String fragment : atStart) {
        if (lower.startsWith(fragment)) {
          return true;
        }
      }
      for (String fragment : anywhere) {
        if (lower.contains(fragment)) {
          return true;
        }
      }
      return pattern != null && pattern.matcher(lower).find();
    }
  }
}
