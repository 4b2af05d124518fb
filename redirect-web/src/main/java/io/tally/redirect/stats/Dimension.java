package io.tally.redirect.stats;

import java.util.Locale;
import java.util.StringJoiner;

/**
 * A breakdown of a link's clicks: human clicks by country, referrer, browser, os or device, or by
 * their campaign's tags (tagged clicks only); bot clicks by kind.
 */
public enum Dimension {
  COUNTRY,
  REFERRER,
  BROWSER,
  OS,
  DEVICE,
  BOT_KIND,
  UTM_SOURCE,
  UTM_MEDIUM,
  UTM_CAMPAIGN;

  /** The name in the API and in {@code click_dimensions_hourly.dimension}. */
  public String label() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** Every label, for a message that lists them. */
  public static String labels() {
    StringJoiner labels = new StringJoiner(", ");
    for (Dimension d : values()) {
      labels.add(d.label());
    }
    return labels.toString();
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
