package io.tally.chaos;

import io.tally.event.ClickFields;
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
    list.add(
        referer(
            "Referer host of 3,000 characters",
            "wp-host-3000",
            utf8("https://" + PoisonRecords.hostName(3_000, 60, random) + "/")));
    list.add(
        referer(
            "Referer host of "
                + ClickFields.MAX_HOST_NAME
                + " characters in labels of "
                + ClickFields.MAX_LABEL,
            "wp-host-" + ClickFields.MAX_HOST_NAME,
            utf8(
                "https://"
                    + PoisonRecords.hostName(
                        ClickFields.MAX_HOST_NAME, ClickFields.MAX_LABEL, random)
                    + "/a")));
    list.add(
        referer(
            "Referer host of " + (ClickFields.MAX_HOST_NAME + 1) + " characters",
            "wp-host-" + (ClickFields.MAX_HOST_NAME + 1),
            utf8(
                "https://"
                    + PoisonRecords.hostName(
                        ClickFields.MAX_HOST_NAME + 1, ClickFields.MAX_LABEL, random)
                    + "/a")));
    list.add(
        referer(
            "Referer label of " + ClickFields.MAX_LABEL + " characters",
            "wp-label-" + ClickFields.MAX_LABEL,
            utf8(
                "https://"
                    + PoisonRecords.hostName(ClickFields.MAX_LABEL, ClickFields.MAX_LABEL, random)
                    + ".example/")));
    list.add(
        referer(
            "Referer label of " + (ClickFields.MAX_LABEL + 1) + " characters",
            "wp-label-" + (ClickFields.MAX_LABEL + 1),
            utf8(
                "https://"
                    + PoisonRecords.hostName(
                        ClickFields.MAX_LABEL + 1, ClickFields.MAX_LABEL + 1, random)
                    + ".example/")));
    list.add(
        referer(
            "Referer host international (bücher.de, UTF-8)",
            "wp-idn",
            utf8("https://bücher.de/kategorie")));
    list.add(
        referer("Referer host an IPv6 literal", "wp-ipv6", utf8("http://[2001:DB8::1]:8080/x")));
    list.add(
        referer(
            "Referer with a NUL in its host",
            "wp-referer-nul",
            utf8("https://exa\u0000mple.com/")));
    list.add(
        referer(
            "Referer with an escape character in its host",
            "wp-referer-control",
            utf8("https://exa\u001bmple.com/")));
    list.add(
        agent(
            "User-Agent of "
                + ClickFields.MAX_USER_AGENT
                + " characters, 4-byte ones at its end (UTF-8)",
            "wp-ua-" + ClickFields.MAX_USER_AGENT,
            utf8(PoisonRecords.userAgent(ClickFields.MAX_USER_AGENT)),
            FIREFOX_ON_LINUX));
    list.add(
        agent(
            "User-Agent of "
                + (ClickFields.MAX_USER_AGENT + 1)
                + " characters, a 4-byte one across the bound (UTF-8)",
            "wp-ua-" + (ClickFields.MAX_USER_AGENT + 1),
            utf8(PoisonRecords.userAgent(ClickFields.MAX_USER_AGENT + 1)),
            FIREFOX_ON_LINUX));
    list.add(
        agent(
            "User-Agent with control characters",
            "wp-ua-control",
            utf8("Mozilla/5.0 \u0001\u001b[31m(X11)\u007f Gecko"),
            PROGRAM));
    list.add(
        agent(
            "User-Agent with a NUL",
            "wp-ua-nul",
            utf8("Mozilla/5.0\u0000 (X11) Gecko"),
            UNKNOWN_BROWSER_ON_LINUX));
    list.add(
        agent(
            "User-Agent with an encoded lone surrogate (ED A0 80)",
            "wp-ua-surrogate",
            PoisonRecords.concat(
                utf8("Mozilla/5.0 (X11) "), new byte[] {(byte) 0xED, (byte) 0xA0, (byte) 0x80}),
            UNKNOWN_BROWSER_ON_LINUX));
    list.add(
        agent(
            "User-Agent with bytes that are not UTF-8 (C3 28 FF)",
            "wp-ua-bad-utf8",
            PoisonRecords.concat(
                utf8("Mozilla/5.0 (X11) "), new byte[] {(byte) 0xC3, 0x28, (byte) 0xFF}),
            UNKNOWN_BROWSER_ON_LINUX));
    return list;
  }

  /** A browser's request with this {@code Referer}. */
  private static Request referer(String kind, String code, byte[] referer) {
    Map<String, byte[]> headers = new LinkedHashMap<>();
    headers.put("User-Agent", utf8(ClickEvents.DESKTOP_BROWSER));
    headers.put("Referer", referer);
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
