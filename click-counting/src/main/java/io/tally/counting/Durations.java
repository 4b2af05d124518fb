package io.tally.counting;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine;

/** Reads durations the way people type them on a command line. */
public final class Durations {

  private static final Pattern SHORT = Pattern.compile("(\\d+)(ms|s|m|h|d)");

  private Durations() {}

  /**
   * Parses {@code 100ms}, {@code 30s}, {@code 5m}, {@code 24h}, {@code 7d} or ISO-8601 such as
   * {@code PT30S}.
   */
  public static Duration parse(String text) {
    String value = text.trim();
    Matcher m = SHORT.matcher(value);
    if (m.matches()) {
      long n = Long.parseLong(m.group(1));
      return switch (m.group(2)) {
        case "ms" -> Duration.ofMillis(n);
        case "s" -> Duration.ofSeconds(n);
        case "m" -> Duration.ofMinutes(n);
        case "h" -> Duration.ofHours(n);
        default -> Duration.ofDays(n);
      };
    }
    try {
      return Duration.parse(value);
    } catch (DateTimeParseException e) {
      throw new IllegalArgumentException(
          "'" + text + "' is not a duration; use e.g. 30s, 5m, 24h or PT30S");
    }
  }

  /** Reads a duration option's value as {@link #parse} does. */
  public static final class Converter implements CommandLine.ITypeConverter<Duration> {
    @Override
    public Duration convert(String value) {
      return parse(value);
    }
  }
}
