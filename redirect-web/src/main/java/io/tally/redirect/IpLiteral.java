package io.tally.redirect;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * IP address literals as clients, proxies and Jetty write them ({@code 203.0.113.7}, {@code ::1},
 * {@code [0:0:0:0:0:0:0:1]}), read without ever asking DNS. A client can put any text in a
 * forwarded-for header, and {@link InetAddress#getByName} looks up whatever it does not recognise
 * as a literal ({@code cafe.de}, {@code 999.1.1.1}), which would send a DNS query from the redirect
 * path.
 */
final class IpLiteral {

  private static final Pattern IPV6 = Pattern.compile("[0-9A-Fa-f:.]{2,45}");

  private IpLiteral() {}

  /**
   * The address, when {@code text} is an IPv4 or IPv6 literal (in brackets or not); empty
   * otherwise.
   */
  static Optional<InetAddress> parse(String text) {
    String address =
        text.startsWith("[") && text.endsWith("]") ? text.substring(1, text.length() - 1) : text;
    try {
      if (address.indexOf(':') >= 0) {
        // With a colon, getByName parses an IPv6 literal or rejects the text; it never looks it up.
        return IPV6.matcher(address).matches()
            ? Optional.of(InetAddress.getByName(address))
            : Optional.empty();
      }
      byte[] octets = ipv4(address);
      return octets == null ? Optional.empty() : Optional.of(InetAddress.getByAddress(octets));
    } catch (UnknownHostException e) {
      return Optional.empty();
    }
  }

  /**
   * The octets of a dotted-quad IPv4 literal, four parts of one to three digits each, or null. Read
   * by hand, without a regular expression or {@code split}, because every counted redirect reads
   * its peer's address.
   */
  private static byte[] ipv4(String text) {
    byte[] octets = new byte[4];
    int part = 0;
    int value = 0;
    int digits = 0;
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (c >= '0' && c <= '9') {
        if (++digits > 3) {
          return null;
        }
        value = value * 10 + (c - '0');
      } else if (c == '.' && digits > 0 && value <= 255 && part < 3) {
        octets[part++] = (byte) value;
        value = 0;
        digits = 0;
      } else {
        return null;
      }
    }
    if (part != 3 || digits == 0 || value > 255) {
      return null;
    }
    octets[3] = (byte) value;
    return octets;
  }

  /**
   * One spelling per address, so that {@code ::1}, {@code [::1]} and {@code 0:0:0:0:0:0:0:1}
   * compare equal and hash alike, and a hop that carries its client's port ({@code
   * 203.0.113.5:51234}, {@code [2001:db8::1]:443}, as some proxies forward it) is its address
   * alone: a client must not become another one, with buckets of its own, for every connection it
   * opens. Text that is not a literal comes back trimmed, as it was.
   */
  static String canonical(String text) {
    String trimmed = text.trim();
    if (ipv4(trimmed) != null && !hasLeadingZero(trimmed)) {
      // Already the one spelling, as a peer address always is: no need to parse and print it again.
      return trimmed;
    }
    return parse(withoutPort(trimmed)).map(InetAddress::getHostAddress).orElse(trimmed);
  }

  /**
   * The address of {@code host:port} (an IPv4 literal) or {@code [host]:port} (IPv6, which needs
   * the brackets); anything else as it is.
   */
  private static String withoutPort(String text) {
    int colon = text.lastIndexOf(':');
    if (colon < 0 || !isPort(text, colon + 1)) {
      return text;
    }
    if (text.startsWith("[") && text.charAt(colon - 1) == ']') {
      return text.substring(1, colon - 1);
    }
    String host = text.substring(0, colon);
    return host.indexOf(':') < 0 && ipv4(host) != null ? host : text;
  }

  private static boolean isPort(String text, int from) {
    int length = text.length() - from;
    if (length < 1 || length > 5) {
      return false;
    }
    for (int i = from; i < text.length(); i++) {
      if (text.charAt(i) < '0' || text.charAt(i) > '9') {
        return false;
      }
    }
    return Integer.parseInt(text, from, text.length(), 10) <= 65_535;
  }

  /**
   * Whether a part of a dotted quad starts with a zero that printing the address would drop ({@code
   * 010}).
   */
  private static boolean hasLeadingZero(String dottedQuad) {
    for (int i = 0; i + 1 < dottedQuad.length(); i++) {
      if (dottedQuad.charAt(i) == '0'
          && (i == 0 || dottedQuad.charAt(i - 1) == '.')
          && dottedQuad.charAt(i + 1) != '.') {
        return true;
      }
    }
    return false;
  }
}
