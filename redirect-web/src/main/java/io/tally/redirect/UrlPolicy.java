package io.tally.redirect;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.Locale;
import java.util.Optional;

/**
 * Which target URLs a link may point to: absolute {@code http} or {@code https} URLs with a host, at
 * most {@value #MAX_LENGTH} characters, without control characters, whitespace or credentials. Everything
 * else ({@code javascript:}, {@code data:}, {@code file:}, relative URLs …) is refused with a reason.
 */
public final class UrlPolicy {

  public static final int MAX_LENGTH = 2048;

  private UrlPolicy() {}

  /** The reason {@code url} is refused, or empty when it is acceptable. */
  public static Optional<String> violation(String url) {
    if (url == null || url.isEmpty()) {
      return Optional.of("url is required");
    }
    if (url.length() > MAX_LENGTH) {
      return Optional.of("url is longer than " + MAX_LENGTH + " characters");
    }
    for (int i = 0; i < url.length(); i++) {
      char c = url.charAt(i);
      if (c <= 0x20 || c == 0x7f || (c >= 0x80 && c <= 0x9f)) {
        return Optional.of("url contains whitespace or a control character at position " + i);
      }
    }
    URI uri;
    try {
      uri = new URI(url);
    } catch (URISyntaxException e) {
      return Optional.of("url is not a valid URI: " + e.getReason());
    }
    String scheme = uri.getScheme();
    if (scheme == null) {
      return Optional.of("url must be absolute, starting with http:// or https://");
    }
    String lower = scheme.toLowerCase(Locale.ROOT);
    if (!lower.equals("http") && !lower.equals("https")) {
      return Optional.of("url scheme '" + scheme + "' is not allowed; only http and https are");
    }
    if (uri.getRawUserInfo() != null || (uri.getRawAuthority() != null && uri.getRawAuthority().contains("@"))) {
      return Optional.of("url must not contain credentials");
    }
    if (uri.getHost() == null || uri.getHost().isEmpty()) {
      return Optional.of("url must have a host");
    }
    return Optional.empty();
  }
}
