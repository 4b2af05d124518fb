package io.tally.redirect;

import com.ibm.icu.text.IDNA;
import io.tally.event.ClickFields;
import java.util.Locale;
import java.util.Optional;

/**
 * Host names in the one ASCII form Tally keeps them in, for target URLs ({@link UrlPolicy}) and
 * referrers ({@link ClickEventFactory}) alike, so both convert international names by one set of
 * UTS #46 options ({@link UrlPolicy} says why these).
 */
final class HostNames {

  /** Thread-safe and immutable, so one serves every request. */
  private static final IDNA UTS46 =
      IDNA.getUTS46Instance(
          IDNA.NONTRANSITIONAL_TO_ASCII
              | IDNA.NONTRANSITIONAL_TO_UNICODE
              | IDNA.CHECK_BIDI
              | IDNA.CHECK_CONTEXTJ
              | IDNA.USE_STD3_RULES);

  private HostNames() {}

  /** The host name in ASCII (lower case, punycode), or empty when UTS #46 finds it invalid. */
  static Optional<String> toAscii(String host) {
    IDNA.Info info = new IDNA.Info();
    StringBuilder ascii = UTS46.nameToASCII(host, new StringBuilder(), info);
    return info.hasErrors() || ascii.isEmpty() ? Optional.empty() : Optional.of(ascii.toString());
  }

  /**
   * The host of a URL in the form a click event carries ({@link ClickFields#isHostName} or {@link
   * ClickFields#isIpLiteral}), or {@code ""} when it cannot take that form: lower case, without a
   * trailing dot, an international name in punycode, an IPv6 literal in brackets.
   *
   * <p>An ASCII name is only lower-cased, not run through UTS #46: that would refuse real hosts
   * such as {@code r3---sn-4g5e6nzz.googlevideo.com} (hyphens in the third and fourth place), which
   * browsers open.
   */
  static String eventForm(String host) {
    String ascii;
    if (isAscii(host)) {
      ascii = host.toLowerCase(Locale.ROOT);
    } else if (host.startsWith("[")) {
      // An IPv6 literal is all ASCII; UTS #46 must not map full-width digits into one.
      return "";
    } else {
      ascii = toAscii(host).orElse("");
    }
    if (ascii.endsWith(".")) {
      ascii = ascii.substring(0, ascii.length() - 1);
    }
    return ClickFields.isHostName(ascii) || ClickFields.isIpLiteral(ascii) ? ascii : "";
  }

  private static boolean isAscii(String text) {
    for (int i = 0; i < text.length(); i++) {
      if (text.charAt(i) >= 0x80) {
        return false;
      }
    }
    return true;
  }
}
