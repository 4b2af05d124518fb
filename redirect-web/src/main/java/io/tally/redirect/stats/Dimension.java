package io.tally.redirect.stats;

import java.util.Locale;

/**
 * A breakdown of a link's clicks: human clicks by country, referrer, browser, os or device; bot
 * clicks by kind.
 */
public enum Dimension {
  COUNTRY,
  REFERRER,
  BROWSER,
  OS,
  DEVICE,
  BOT_KIND;

  /** The name in the API and in {@code click_dimensions_hourly.dimension}. */
  public String label() {
    return name().toLowerCase(Locale.ROOT);
  }

  public static Dimension parse(String text) {
    for (Dimension d : values()) {
      if (d.label().equals(text)) {
        return d;
      }
    }
    return null;
  }
}
