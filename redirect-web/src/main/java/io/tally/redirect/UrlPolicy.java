package io.tally.redirect;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.Locale;

/**
 * Which target URLs a link may point to: absolute {@code http} or {@code https} URLs with a host,
 * at most {@value #MAX_LENGTH} characters once in ASCII, without control characters, whitespace or
 * credentials, and not back at this shortener's own public URL (a short link to a short link of
 * ours could only redirect in a loop). Everything else ({@code javascript:}, {@code data:}, {@code
 * file:}, relative URLs …) is refused with a reason.
 *
 * <p>An accepted URL is kept in ASCII, the form a {@code Location} header can carry: an
 * international host name in its punycode form, other non-ASCII characters percent-encoded as
 * UTF-8. Sent as typed, a Cyrillic path would leave the server as question marks. Host names are
 * converted by UTS #46 with non-transitional processing, as browsers do: {@code faß.de} stays
 * {@code faß.de} ({@code xn--fa-hia.de}), where IDNA2003 ({@link java.net.IDN}) would turn it into
 * {@code fass.de}, another domain.
 */
public final class UrlPolicy {

  public static final int MAX_LENGTH = 2048;

  private final Place own;

  /**
   * @param publicUrl the base of this shortener's short URLs ({@code TALLY_PUBLIC_URL})
   * @throws IllegalArgumentException when it is not an absolute http or https URL with a host
   */
  public UrlPolicy(String publicUrl) {
    Verdict verdict = parse(publicUrl);
    if (verdict instanceof Refused refused) {
      throw new IllegalArgumentException(
          "the public URL '" + publicUrl + "' is not usable: " + refused.reason());
    }
    this.own = Place.of(URI.create(((Accepted) verdict).url()));
  }

  /** What the policy says of a URL: accepted, in the form to store, or refused, with the reason. */
  public sealed interface Verdict permits Accepted, Refused {}

  /**
   * @param url the URL to store and redirect to, in ASCII
   */
  public record Accepted(String url) implements Verdict {}

  /**
   * @param reason why, in words an API client can act on
   */
  public record Refused(String reason) implements Verdict {}

  public Verdict check(String url) {
    Verdict verdict = parse(url);
    if (verdict instanceof Accepted accepted
        && own.contains(Place.of(URI.create(accepted.url())))) {
      return new Refused(
          "url points back at this shortener ("
              + own.describe()
              + "): its redirect would lead to another of our redirects, or to itself in a loop");
    }
    return verdict;
  }

  private static Verdict parse(String url) {
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
      // java.net.URI takes a lone surrogate as a character, then fails to encode it as UTF-8.
      if (Character.isHighSurrogate(c)
          && i + 1 < url.length()
          && Character.isLowSurrogate(url.charAt(i + 1))) {
        i++;
      } else if (Character.isSurrogate(c)) {
        return new Refused("url contains a lone surrogate at position " + i);
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
    if (uri.getRawUserInfo() != null
        || (uri.getRawAuthority() != null && uri.getRawAuthority().contains("@"))) {
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
      return new Refused(
          "url is longer than " + MAX_LENGTH + " characters once non-ASCII characters are encoded");
    }
    return new Accepted(ascii);
  }

  private static URI withAsciiHost(URI uri) throws URISyntaxException {
    String authority = uri.getRawAuthority();
    int colon = authority.lastIndexOf(':');
    String host = colon < 0 ? authority : authority.substring(0, colon);
    String port = colon < 0 ? "" : authority.substring(colon);
    return new URI(
        uri.getScheme()
            + "://"
            + HostNames.toAscii(host).orElseThrow(IllegalArgumentException::new)
            + port
            + (uri.getRawPath() == null ? "" : uri.getRawPath())
            + (uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery())
            + (uri.getRawFragment() == null ? "" : "#" + uri.getRawFragment()));
  }

  /**
   * Where a URL leads, in one spelling per place: the host in lower-case ASCII without a trailing
   * dot (an address literal in {@link IpLiteral#canonical} form), the port with the scheme's
   * default filled in, and the path.
   */
  private record Place(String host, int port, boolean defaultPort, String path) {

    static Place of(URI uri) {
      String host =
          uri.getHost().endsWith(".")
              ? uri.getHost().substring(0, uri.getHost().length() - 1)
              : uri.getHost();
      String comparable =
          IpLiteral.parse(host).isPresent()
              ? IpLiteral.canonical(host)
              : HostNames.toAscii(host).orElse(host.toLowerCase(Locale.ROOT));
      int port =
          uri.getPort() >= 0 ? uri.getPort() : uri.getScheme().equalsIgnoreCase("https") ? 443 : 80;
      return new Place(
          comparable,
          port,
          port == 80 || port == 443,
          uri.getRawPath() == null ? "" : uri.getRawPath());
    }

    /**
     * Whether {@code other} is at or below this place. http and https on their default ports count
     * as one place: a site on both commonly sends one to the other.
     */
    boolean contains(Place other) {
      if (!host.equals(other.host) || !(port == other.port || (defaultPort && other.defaultPort))) {
        return false;
      }
      String base = path.endsWith("/") ? path : path + "/";
      return base.equals("/") || (other.path + "/").startsWith(base);
    }

    String describe() {
      return host
          + (defaultPort ? "" : ":" + port)
          + (path.isEmpty() || path.equals("/") ? "" : path);
    }
  }
}
