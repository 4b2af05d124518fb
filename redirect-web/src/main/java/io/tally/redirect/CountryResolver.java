package io.tally.redirect;

import io.tally.event.ClickEvent;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * The client's country: from a trusted CDN header when one is configured, otherwise {@code unknown}.
 */
public class CountryResolver {

  private static final Pattern ISO_CODE = Pattern.compile("[A-Za-z]{2}");

  /** The country for a client address, given the value of the trusted country header (may be null). */
  public String country(String address, String headerValue) {
    if (headerValue != null && ISO_CODE.matcher(headerValue).matches()) {
      return headerValue.toUpperCase(Locale.ROOT);
    }
    return ClickEvent.UNKNOWN_COUNTRY;
  }
}
