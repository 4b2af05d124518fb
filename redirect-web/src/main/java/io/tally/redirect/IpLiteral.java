package io.tally.redirect;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * IP address literals as clients, proxies and Jetty write them ({@code 203.0.113.7}, {@code ::1},
 * {@code [0:0:0:0:0:0:0:1]}), read without ever asking DNS. A client can put any text in a forwarded-for
 * header, and {@link InetAddress#getByName} looks up whatever it does not recognise as a literal
 * ({@code cafe.de}, {@code 999.1.1.1}), which would send a DNS query from the redirect path.
 */
final class IpLiteral {

  private static final Pattern IPV4_PART = Pattern.compile("[0-9]{1,3}");
  private static final Pattern IPV6 = Pattern.compile("[0-9A-Fa-f:.]{2,45}");

  private IpLiteral() {}

  /** The address, when {@code text} is an IPv4 or IPv6 literal (in brackets or not); empty otherwise. */
  static Optional<InetAddress> parse(String text) {
    String address = text.startsWith("[") && text.endsWith("]") ? text.substring(1, text.length() - 1) : text;
    try {
      if (address.indexOf(':') >= 0) {
        // With a colon, getByName parses an IPv6 literal or rejects the text; it never looks it up.
        return IPV6.matcher(address).matches() ? Optional.of(InetAddress.getByName(address)) : Optional.empty();
      }
      String[] parts = address.split("\\.", -1);
      if (parts.length != 4) {
        return Optional.empty();
      }
      byte[] octets = new byte[4];
      for (int i = 0; i < 4; i++) {
        int octet = IPV4_PART.matcher(parts[i]).matches() ? Integer.parseInt(parts[i]) : -1;
        if (octet < 0 || octet > 255) {
          return Optional.empty();
        }
        octets[i] = (byte) octet;
      }
      return Optional.of(InetAddress.getByAddress(octets));
    } catch (UnknownHostException e) {
      return Optional.empty();
    }
  }

  /**
   * One spelling per address, so that {@code ::1}, {@code [::1]} and {@code 0:0:0:0:0:0:0:1} compare
   * equal and hash alike; text that is not a literal comes back trimmed, as it was.
   */
  static String canonical(String text) {
    String trimmed = text.trim();
    return parse(trimmed).map(InetAddress::getHostAddress).orElse(trimmed);
  }
}
