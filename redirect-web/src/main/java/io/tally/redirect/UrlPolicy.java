package io.tally.redirect;

import java.net.IDN;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.Locale;

/**
 * Which target URLs a link may point to: absolute {@code http} or {@code https} URLs with a host, at
 * most {@value #MAX_LENGTH} characters once in ASCII, without control characters, whitespace or
 * credentials. Everything else ({@code javascript:}, {@code data:}, {@code file:}, relative URLs …) is
 * refused with a reason.
 *
 * <p>An accepted URL is kept in ASCII, the form a {@code Location} header can carry: an international
 * host name in its punycode form, other non-ASCII characters percent-encoded as UTF-8. Sent as typed, a
 * Cyrillic path would leave the server as question marks.
 */
public final class UrlPolicy {

  public static final int MAX_LENGTH = 2048;

  private UrlPolicy() {}

  /** What the policy says of a URL: accepted, in the form to store, or refused, with the reason. */
  public sealed interface Verdict permits Accepted, Refused {}

  /** @param url the URL to store and redirect to, in ASCII */
  public record Accepted(String url) implements Verdict {}

  /** @param reason why, in words an API client can act on */
  public record Refused(String reason) implements Verdict {}

  public static Verdict check(String url) {
    if (url == null || url.isEmpty()) {
      return new Refused("url is required");
    }
    if (url.length() > MAX_LENGTH) {
      return new Refused("url is longer than " + MAX_LENGTH + " characters");
    }
    for (int i = 0; i < url.length(); i++) {
      char c = url.charAt(i);
      if (c <= 0x20 || c == 0x7f || (c >= 0x80 && c <= 0x9f)) {
        return new Refused("url contains whitespace or a control character at position " + i);
      }
    }
    URI uri;
    try {
      uri = new URI(url);
    } catch (URISyntaxException e) {
      return new Refused("url is not a valid URI: " + e.getReason());
    }
    String scheme = uri.getScheme();
    if (scheme == null) {
      return new Refused("url must be absolute, starting with http:// or https://");
    }
    String lower = scheme.toLowerCase(Locale.ROOT);
    if (!lower.equals("http") && !lower.equals("https")) {
      return new Refused("url scheme '" + scheme + "' is not allowed; only http and https are");
    }
    if (uri.getRawUserInfo() != null || (uri.getRawAuthority() != null && uri.getRawAuthority().contains("@"))) {
      return new Refused("url must not contain credentials");
    }
    if (uri.getHost() == null && uri.getRawAuthority() != null) {
      // java.net.URI only knows ASCII host names; an international one parses as a bare authority.
      try {
        uri = withAsciiHost(uri);
      } catch (URISyntaxException | IllegalArgumentException e) {
        return new Refused("url host '" + uri.getRawAuthority() + "' is not a valid host name");
      }
    }
    if (uri.getHost() == null || uri.getHost().isEmpty()) {
      return new Refused("url must have a host");
    }
    String ascii = uri.toASCIIString();
    if (ascii.length() > MAX_LENGTH) {
      return new Refused("url is longer than " + MAX_LENGTH + " characters once non-ASCII characters are encoded");
    }
    return new Accepted(ascii);
  }

  private static URI withAsciiHost(URI uri) throws URISyntaxException {
    String authority = uri.getRawAuthority();
    int colon = authority.lastIndexOf(':');
    String host = colon < 0 ? authority : authority.substring(0, colon);
    String port = colon < 0 ? "" : authority.substring(colon);
    return new URI(uri.getScheme() + "://" + IDN.toASCII(host, IDN.USE_STD3_ASCII_RULES) + port
        + (uri.getRawPath() == null ? "" : uri.getRawPath())
        + (uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery())
        + (uri.getRawFragment() == null ? "" : "#" + uri.getRawFragment()));
  }
}
