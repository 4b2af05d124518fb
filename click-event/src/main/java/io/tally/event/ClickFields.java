package io.tally.event;

/**
 * The bound of every descriptive field of a click event, written once for the producer that shapes
 * a field and for the codec that checks it on read. A value within these bounds is short, printable
 * and well-formed Unicode, so nothing downstream (a Kafka record, a Flink key, a PostgreSQL {@code
 * text} column or btree index entry) can refuse it: no NUL or other control character, no lone
 * surrogate, no value near PostgreSQL's 2,704-byte index entry limit.
 *
 * <table>
 *   <caption>Fields and their bounds</caption>
 *   <tr><th>field</th><th>bound</th></tr>
 *   <tr><td>{@code visitor}, {@code ip_hash}</td><td>{@code ""} or {@value #VISITOR_LENGTH}
 *       characters of base64url</td></tr>
 *   <tr><td>{@code ua}</td><td>at most {@value #MAX_USER_AGENT} characters of printable text</td></tr>
 *   <tr><td>{@code referrer_domain}</td><td>{@code ""}, a lower-case host name (at most {@value
 *       #MAX_HOST_NAME} characters, labels of 1 to {@value #MAX_LABEL} letters, digits and hyphens,
 *       international names as punycode) or an IP literal (IPv6 in brackets)</td></tr>
 *   <tr><td>{@code country}</td><td>two upper-case letters or {@code unknown}</td></tr>
 *   <tr><td>{@code utm_source}, {@code utm_medium}, {@code utm_campaign} (version 3)</td><td>at most
 *       {@value #MAX_CAMPAIGN_VALUE} characters of printable text, none of them blank at either
 *       end</td></tr>
 *   <tr><td>{@code ua_family}, {@code device} (version 1)</td><td>1 to {@value #MAX_CLIENT_NAME}
 *       characters of printable text</td></tr>
 * </table>
 *
 * The codec bounds the rest itself: {@code click_id} (a canonical UUID), {@code code} ({@link
 * LinkCodes}), {@code ts} (a plausible instant), {@code range_visitor} ({@link VisitorSketches}),
 * the booleans, and the record's size.
 */
public final class ClickFields {

  /** Longer user agents are cut by the producer: real ones are far shorter. */
  public static final int MAX_USER_AGENT = 512;

  /** A visitor hash: 128 bits in unpadded base64url. */
  public static final int VISITOR_LENGTH = 22;

  public static final int MAX_HOST_NAME = 253;
  public static final int MAX_LABEL = 63;

  /**
   * A campaign tag's value ({@code utm_source} and its siblings): longer ones are cut by the
   * producer, as they are dimension values kept per link and hour.
   */
  public static final int MAX_CAMPAIGN_VALUE = 100;

  /** A version-1 browser or device family. */
  public static final int MAX_CLIENT_NAME = 128;

  private static final int MAX_IPV6_LITERAL = 47;

  private ClickFields() {}

  /**
   * What is wrong with the descriptive fields of an event, naming the field, or null when every
   * field is within its bound. Never repeats the value: it may be long or unprintable.
   */
  static String problem(
      String visitor,
      String userAgent,
      String referrerDomain,
      String country,
      ClickEvent.Campaign campaign,
      ClickEvent.V1Client v1) {
    String field = v1 == null ? "visitor" : "ip_hash";
    if (!isVisitor(visitor)) {
      return field
          + " is not empty or "
          + VISITOR_LENGTH
          + " base64url characters of 128 bits ("
          + visitor.length()
          + " characters)";
    }
    String text = textProblem(userAgent, MAX_USER_AGENT);
    if (text != null) {
      return "ua " + text;
    }
    if (!referrerDomain.isEmpty() && !isHostName(referrerDomain) && !isIpLiteral(referrerDomain)) {
      return "referrer_domain is not a host name or IP literal ("
          + referrerDomain.length()
          + " characters)";
    }
    if (!isCountry(country)) {
      return "country is not two upper-case letters or " + ClickEvent.UNKNOWN_COUNTRY;
    }
    text = campaignProblem(campaign.source());
    if (text != null) {
      return "utm_source " + text;
    }
    text = campaignProblem(campaign.medium());
    if (text != null) {
      return "utm_medium " + text;
    }
    text = campaignProblem(campaign.campaign());
    if (text != null) {
      return "utm_campaign " + text;
    }
    if (v1 != null) {
      text = clientNameProblem(v1.uaFamily());
      if (text != null) {
        return "ua_family " + text;
      }
      text = clientNameProblem(v1.device());
      if (text != null) {
        return "device " + text;
      }
    }
    return null;
  }

  private static String campaignProblem(String value) {
    if (!value.strip().equals(value)) {
      return "has blank space at an end";
    }
    return textProblem(value, MAX_CAMPAIGN_VALUE);
  }

  private static String clientNameProblem(String name) {
    return name.isEmpty() ? "is empty" : textProblem(name, MAX_CLIENT_NAME);
  }

  /**
   * Whether {@code visitor} is {@code ""} or a visitor hash: 128 bits in unpadded base64url,
   * spelled as an encoder spells them.
   */
  public static boolean isVisitor(String visitor) {
    if (visitor.isEmpty()) {
      return true;
    }
    if (visitor.length() != VISITOR_LENGTH) {
      return false;
    }
    for (int i = 0; i < visitor.length(); i++) {
      if (!isBase64Url(visitor.charAt(i))) {
        return false;
      }
    }
    // 22 characters carry 132 bits: the last one's four spare bits are zero in the one spelling of
    // a 128-bit hash, so that two spellings cannot make two visitors of one.
    return "AQgw".indexOf(visitor.charAt(VISITOR_LENGTH - 1)) >= 0;
  }

  /**
   * What makes {@code text} unfit as a field of at most {@code maxLength} characters, or null: a
   * control character (NUL among them), a lone surrogate, or its length.
   */
  static String textProblem(String text, int maxLength) {
    if (text.length() > maxLength) {
      return "is longer than " + maxLength + " characters (" + text.length() + ")";
    }
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (Character.isISOControl(c)) {
        return "has a control character at " + i;
      }
      if (Character.isHighSurrogate(c)
          && i + 1 < text.length()
          && Character.isLowSurrogate(text.charAt(i + 1))) {
        i++;
      } else if (Character.isSurrogate(c)) {
        return "has a lone surrogate at " + i;
      }
    }
    return null;
  }

  /**
   * A raw user agent made fit for the event: each control character and lone surrogate replaced by
   * U+FFFD, then cut to {@value #MAX_USER_AGENT} characters without splitting a pair.
   */
  public static String userAgent(String raw) {
    return fit(raw, MAX_USER_AGENT);
  }

  /**
   * A campaign tag's value as a request gave it, decoded, made fit for the event: blank space at
   * its ends removed, then as {@link #userAgent} makes a user agent fit, to {@value
   * #MAX_CAMPAIGN_VALUE} characters (and stripped again, since the cut may end in a blank).
   */
  public static String campaignValue(String raw) {
    return raw == null ? "" : fit(raw.strip(), MAX_CAMPAIGN_VALUE).strip();
  }

  /**
   * {@code raw} with each control character and lone surrogate replaced by U+FFFD, then cut to
   * {@code maxLength} characters without splitting a pair.
   */
  private static String fit(String raw, int maxLength) {
    if (raw == null) {
      return "";
    }
    if (textProblem(raw, maxLength) == null) {
      return raw;
    }
    StringBuilder out = new StringBuilder(Math.min(raw.length(), maxLength));
    for (int i = 0; i < raw.length() && out.length() < maxLength; i++) {
      char c = raw.charAt(i);
      boolean pair =
          Character.isHighSurrogate(c)
              && i + 1 < raw.length()
              && Character.isLowSurrogate(raw.charAt(i + 1));
      if (pair) {
        if (out.length() + 2 > maxLength) {
          break;
        }
        out.append(c).append(raw.charAt(++i));
      } else if (Character.isISOControl(c) || Character.isSurrogate(c)) {
        out.append('\uFFFD');
      } else {
        out.append(c);
      }
    }
    return out.toString();
  }

  /**
   * Whether {@code host} is a host name in the form events carry: lower-case ASCII letters, digits
   * and hyphens in dot-separated labels of 1 to {@value #MAX_LABEL} characters that neither start
   * nor end with a hyphen, at most {@value #MAX_HOST_NAME} characters in all, no trailing dot.
   */
  public static boolean isHostName(String host) {
    if (host.isEmpty() || host.length() > MAX_HOST_NAME) {
      return false;
    }
    int labelStart = 0;
    for (int i = 0; i <= host.length(); i++) {
      if (i == host.length() || host.charAt(i) == '.') {
        int length = i - labelStart;
        if (length < 1
            || length > MAX_LABEL
            || host.charAt(labelStart) == '-'
            || host.charAt(i - 1) == '-') {
          return false;
        }
        labelStart = i + 1;
      } else {
        char c = host.charAt(i);
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) {
          return false;
        }
      }
    }
    return true;
  }

  /**
   * Whether {@code text} is an IPv4 literal in dotted-quad form, or an IPv6 literal in brackets as
   * a URL writes it ({@code [2001:db8::1]}, lower-case hex).
   */
  public static boolean isIpLiteral(String text) {
    if (text.startsWith("[")) {
      return isIpv6(text);
    }
    return isIpv4(text, 0, text.length());
  }

  private static boolean isIpv6(String text) {
    if (text.length() < 4 || text.length() > MAX_IPV6_LITERAL || !text.endsWith("]")) {
      return false;
    }
    String inner = text.substring(1, text.length() - 1);
    int groups = 0;
    int lastColon = inner.lastIndexOf(':');
    if (lastColon < 0) {
      return false;
    }
    if (inner.indexOf('.') >= 0) {
      if (!isIpv4(inner, lastColon + 1, inner.length())) {
        return false;
      }
      groups = 2;
      // The colon before the IPv4 part ends the hex part, unless it is the second of a "::".
      inner =
          inner.substring(
              0,
              inner.charAt(lastColon - 1 < 0 ? 0 : lastColon - 1) == ':'
                  ? lastColon + 1
                  : lastColon);
    }
    int gap = inner.indexOf("::");
    if (gap >= 0 && inner.indexOf("::", gap + 1) >= 0) {
      return false;
    }
    if (gap < 0) {
      int counted = hexGroups(inner);
      return counted >= 0 && groups + counted == 8;
    }
    int left = hexGroups(inner.substring(0, gap));
    int right = hexGroups(inner.substring(gap + 2));
    return left >= 0 && right >= 0 && groups + left + right <= 7;
  }

  /** The number of colon-separated groups of 1 to 4 lower-case hex digits, or -1 when it is not. */
  private static int hexGroups(String text) {
    if (text.isEmpty()) {
      return 0;
    }
    int groups = 0;
    int start = 0;
    for (int i = 0; i <= text.length(); i++) {
      if (i == text.length() || text.charAt(i) == ':') {
        if (i - start < 1 || i - start > 4) {
          return -1;
        }
        groups++;
        start = i + 1;
      } else if (!isLowerHex(text.charAt(i))) {
        return -1;
      }
    }
    return groups;
  }

  private static boolean isIpv4(String text, int from, int to) {
    int octets = 0;
    int i = from;
    while (i <= to) {
      int start = i;
      int value = 0;
      while (i < to && text.charAt(i) >= '0' && text.charAt(i) <= '9' && i - start < 3) {
        value = value * 10 + (text.charAt(i) - '0');
        i++;
      }
      int digits = i - start;
      if (digits == 0 || value > 255 || (digits > 1 && text.charAt(start) == '0')) {
        return false;
      }
      octets++;
      if (i == to) {
        return octets == 4;
      }
      if (text.charAt(i) != '.' || octets == 4) {
        return false;
      }
      i++;
    }
    return false;
  }

  /** Whether {@code country} is two upper-case ASCII letters or {@code unknown}. */
  public static boolean isCountry(String country) {
    if (country.equals(ClickEvent.UNKNOWN_COUNTRY)) {
      return true;
    }
    return country.length() == 2 && isUpper(country.charAt(0)) && isUpper(country.charAt(1));
  }

  private static boolean isUpper(char c) {
    return c >= 'A' && c <= 'Z';
  }

  private static boolean isLowerHex(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
  }

  private static boolean isBase64Url(char c) {
    return (c >= 'A' && c <= 'Z')
        || (c >= 'a' && c <= 'z')
        || (c >= '0' && c <= '9')
        || c == '-'
        || c == '_';
  }
}
