package io.tally.chaos;

import static io.tally.chaos.PoisonRecords.concat;
import static io.tally.chaos.PoisonRecords.hostName;
import static io.tally.chaos.PoisonRecords.userAgent;
import static io.tally.event.ClickFields.MAX_HOST_NAME;
import static io.tally.event.ClickFields.MAX_LABEL;
import static io.tally.event.ClickFields.MAX_USER_AGENT;

import io.tally.testing.ClickEvents;
import io.tally.testing.ClickOracle;
import io.tally.testing.Clients;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * Redirect requests whose {@code Referer} or {@code User-Agent} a client made up to break what
 * reads it further on: hosts past the bounds of a host name, international and IP hosts, user
 * agents at and past their bound with 4-byte characters, control characters, NUL and bytes that are
 * not UTF-8. Each goes to a link of its own, so that its clicks can be told apart. redirect-web may
 * refuse a request outright (a 4xx: no click); a request it answers with 302 is a click and must be
 * counted, its referrer kept as a host name or recorded as none.
 */
final class PoisonRequests {

  /**
   * One kind of request: a name for the report, its link, its headers as raw bytes, and what its
   * clicks count as.
   */
  record Request(String kind, String code, Map<String, byte[]> headers, ClickOracle.Facts client) {}

  private static final ClickOracle.Facts BROWSER = Clients.PEOPLE.get(0).facts();
  private static final ClickOracle.Facts FIREFOX_ON_LINUX = Clients.PEOPLE.get(2).facts();

  /**
   * What a made-up agent that names a platform but no browser counts as: a person of that platform
   * whose browser is unknown.
   */
  private static final ClickOracle.Facts UNKNOWN_BROWSER_ON_LINUX =
      new ClickOracle.Facts("", "Other", "Linux", "desktop");

  /** What an agent that names neither counts as: a program. */
  private static final ClickOracle.Facts PROGRAM =
      new ClickOracle.Facts("crawler", "Other", "Other", "bot");

  private PoisonRequests() {}

  /** Every kind; {@code seed} picks the letters of the made-up hosts. */
  static List<Request> all(long seed) {
    SplittableRandom random = new SplittableRandom(seed);
    List<Request> list = new ArrayList<>();
    String host = hostName(3_000, 60, random);
    list.add(referer("Referer host of 3,000 characters", "wp-host-3000", "https://" + host + "/"));
    host = hostName(MAX_HOST_NAME, MAX_LABEL, random);
    String kind = "Referer host of " + MAX_HOST_NAME + " characters in labels of " + MAX_LABEL;
    list.add(referer(kind, "wp-host-" + MAX_HOST_NAME, "https://" + host + "/a"));
    host = hostName(MAX_HOST_NAME + 1, MAX_LABEL, random);
    kind = "Referer host of " + (MAX_HOST_NAME + 1) + " characters";
    list.add(referer(kind, "wp-host-" + (MAX_HOST_NAME + 1), "https://" + host + "/a"));
    host = hostName(MAX_LABEL, MAX_LABEL, random);
    kind = "Referer label of " + MAX_LABEL + " characters";
    list.add(referer(kind, "wp-label-" + MAX_LABEL, "https://" + host + ".example/"));
    host = hostName(MAX_LABEL + 1, MAX_LABEL + 1, random);
    kind = "Referer label of " + (MAX_LABEL + 1) + " characters";
    list.add(referer(kind, "wp-label-" + (MAX_LABEL + 1), "https://" + host + ".example/"));
    kind = "Referer host international (bücher.de, UTF-8)";
    list.add(referer(kind, "wp-idn", "https://bücher.de/kategorie"));
    list.add(referer("Referer host an IPv6 literal", "wp-ipv6", "http://[2001:DB8::1]:8080/x"));
    list.add(
        referer("Referer with a NUL in its host", "wp-referer-nul", "https://exa\u0000mple.com/"));
    kind = "Referer with an escape character in its host";
    list.add(referer(kind, "wp-referer-control", "https://exa\u001bmple.com/"));
    kind = "User-Agent of " + MAX_USER_AGENT + " characters, 4-byte ones at its end (UTF-8)";
    byte[] ua = utf8(userAgent(MAX_USER_AGENT));
    list.add(agent(kind, "wp-ua-" + MAX_USER_AGENT, ua, FIREFOX_ON_LINUX));
    kind = "User-Agent of " + (MAX_USER_AGENT + 1) + " characters, a 4-byte one across the bound";
    ua = utf8(userAgent(MAX_USER_AGENT + 1));
    list.add(agent(kind + " (UTF-8)", "wp-ua-" + (MAX_USER_AGENT + 1), ua, FIREFOX_ON_LINUX));
    ua = utf8("Mozilla/5.0 \u0001\u001b[31m(X11)\u007f Gecko");
    list.add(agent("User-Agent with control characters", "wp-ua-control", ua, PROGRAM));
    ua = utf8("Mozilla/5.0\u0000 (X11) Gecko");
    list.add(agent("User-Agent with a NUL", "wp-ua-nul", ua, UNKNOWN_BROWSER_ON_LINUX));
    kind = "User-Agent with an encoded lone surrogate (ED A0 80)";
    ua = concat(utf8("Mozilla/5.0 (X11) "), new byte[] {(byte) 0xED, (byte) 0xA0, (byte) 0x80});
    list.add(agent(kind, "wp-ua-surrogate", ua, UNKNOWN_BROWSER_ON_LINUX));
    kind = "User-Agent with bytes that are not UTF-8 (C3 28 FF)";
    ua = concat(utf8("Mozilla/5.0 (X11) "), new byte[] {(byte) 0xC3, 0x28, (byte) 0xFF});
    list.add(agent(kind, "wp-ua-bad-utf8", ua, UNKNOWN_BROWSER_ON_LINUX));
    return list;
  }

  /** A browser's request with this {@code Referer}. */
  private static Request referer(String kind, String code, String referer) {
    Map<String, byte[]> headers = new LinkedHashMap<>();
    headers.put("User-Agent", utf8(ClickEvents.DESKTOP_BROWSER));
    headers.put("Referer", utf8(referer));
    return new Request(kind, code, headers, BROWSER);
  }

  /**
   * A request with this {@code User-Agent} and no referrer, whose clicks count as {@code client}.
   */
  private static Request agent(
      String kind, String code, byte[] userAgent, ClickOracle.Facts client) {
    return new Request(kind, code, Map.of("User-Agent", userAgent), client);
  }

  private static byte[] utf8(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }
}
