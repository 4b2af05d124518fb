package io.tally.redirect.stats;

import io.tally.redirect.http.ApiException;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.time.zone.ZoneOffsetTransition;
import java.time.zone.ZoneRules;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The time range of a stats request, aligned to whole buckets: {@code from} is moved back to the
 * start of its bucket and {@code to} (exclusive) forward to the end of its bucket, so every bucket
 * in the answer is complete and the answer says which range it covers. Hours and days are those of
 * {@code zone}: a day there can have 23 or 25 hours, and an hour can start at half past a UTC hour.
 *
 * @param from first instant covered, a bucket boundary
 * @param to end of the range (exclusive), a bucket boundary
 * @param interval the bucket size
 * @param zone the time zone whose hours and days the buckets are
 */
public record StatsRange(Instant from, Instant to, Interval interval, ZoneId zone) {

  /** A range of UTC buckets, as the tables store them. */
  public StatsRange(Instant from, Instant to, Interval interval) {
    this(from, to, interval, ZoneOffset.UTC);
  }

  /** More points than this are refused: no chart shows them, and the answer would be megabytes. */
  public static final int MAX_POINTS = 10_000;

  public static final Duration DEFAULT_SPAN = Duration.ofHours(24);

  /** Instants outside these are no click's, and far ones overflow epoch milliseconds. */
  static final Instant EARLIEST = Instant.parse("2000-01-01T00:00:00Z");

  /** The latest instant the API takes, in a range or as a link's expiry. */
  public static final Instant LATEST = Instant.parse("2100-01-01T00:00:00Z");

  private static final Pattern RELATIVE = Pattern.compile("(\\d{1,6})([mhd])");

  /**
   * Reads {@code from}, {@code to} (ISO-8601 instants, {@code now}, or a span back from now such as
   * {@code 90m}, {@code 24h}, {@code 7d}) and {@code interval} (minute, hour, day or absent).
   *
   * @throws ApiException 400 with the reason when a value cannot be read or the range is refused
   */
  public static StatsRange parse(String fromText, String toText, String intervalText, Instant now) {
    return parse(fromText, toText, intervalText, now, ZoneOffset.UTC);
  }

  /** The same, with the hours and days of {@code zone}. */
  public static StatsRange parse(
      String fromText, String toText, String intervalText, Instant now, ZoneId zone) {
    Asked asked = Asked.read(fromText, toText, now);
    Instant from = asked.from();
    Instant to = asked.to();
    Interval interval;
    if (intervalText == null || intervalText.isBlank()) {
      interval = Interval.forSpan(Duration.between(from, to));
    } else {
      interval = Interval.parse(intervalText);
      if (interval == null) {
        throw new ApiException(
            400, "interval must be minute, hour or day, not '" + intervalText + "'");
      }
    }
    StatsRange range =
        new StatsRange(interval.floor(from, zone), interval.ceil(to, zone), interval, zone);
    long points = range.points();
    if (points > MAX_POINTS) {
      throw new ApiException(
          400,
          "the range holds "
              + points
              + " "
              + interval.label()
              + "s, more than "
              + MAX_POINTS
              + " points: choose a coarser interval or a shorter range");
    }
    return range;
  }

  /**
   * The same range widened to another interval's stored buckets, which are UTC hours and days
   * (breakdowns are kept per hour). A range of local days in a zone of whole-hour offsets stays as
   * it is under {@link Interval#HOUR}.
   */
  public StatsRange alignedTo(Interval other) {
    return new StatsRange(other.floor(from), other.ceil(to), other);
  }

  /** The start of every bucket of the range, in order. */
  public List<Instant> buckets() {
    List<Instant> starts = new ArrayList<>();
    for (Instant t = from; t.isBefore(to); t = interval.next(t, zone)) {
      starts.add(t);
    }
    return starts;
  }

  /** Whether the zone's offset is 0 throughout the range, so its buckets are the stored ones. */
  public boolean isUtc() {
    return offsetsThroughout(offset -> offset.getTotalSeconds() == 0);
  }

  /**
   * Whether the zone's offset is a whole number of hours throughout the range, so that its hours
   * (and days) are made of stored UTC hours.
   */
  public boolean inWholeHours() {
    return offsetsThroughout(offset -> offset.getTotalSeconds() % 3600 == 0);
  }

  private boolean offsetsThroughout(Predicate<ZoneOffset> test) {
    ZoneRules rules = zone.getRules();
    if (!test.test(rules.getOffset(from))) {
      return false;
    }
    for (ZoneOffsetTransition next = rules.nextTransition(from);
        next != null && next.getInstant().isBefore(to);
        next = rules.nextTransition(next.getInstant())) {
      if (!test.test(next.getOffsetAfter())) {
        return false;
      }
    }
    return true;
  }

  /**
   * The range of the same length that ends where this one starts, in the same buckets: the period a
   * comparison sets this one against.
   */
  public StatsRange previous() {
    return new StatsRange(interval.minus(from, buckets().size(), zone), from, interval, zone);
  }

  /**
   * The whole UTC hours holding {@code from} to {@code to} (read as {@link #parse} reads them), for
   * data kept per hour since {@code oldest}, a whole hour.
   *
   * @throws ApiException 400 with the reason when a value cannot be read or the range starts before
   *     {@code oldest}
   */
  public static StatsRange hoursSince(
      String fromText, String toText, Instant now, Instant oldest, String whatIsKept) {
    Asked asked = Asked.read(fromText, toText, now);
    Instant from = asked.from();
    Instant to = asked.to();
    StatsRange range =
        new StatsRange(Interval.HOUR.floor(from), Interval.HOUR.ceil(to), Interval.HOUR);
    if (range.from().isBefore(oldest)) {
      throw new ApiException(400, whatIsKept + ": ask for a range from " + oldest + " on");
    }
    return range;
  }

  /** A range's two ends as asked for, before they are widened to whole buckets. */
  private record Asked(Instant from, Instant to) {

    /** Reads {@code from} (24 hours ago when absent) and {@code to} (now when absent). */
    static Asked read(String fromText, String toText, Instant now) {
      Instant to = toText == null || toText.isBlank() ? now : instant("to", toText, now);
      Instant from =
          fromText == null || fromText.isBlank()
              ? now.minus(DEFAULT_SPAN)
              : instant("from", fromText, now);
      if (to.isBefore(from)) {
        throw new ApiException(400, "to (" + to + ") is before from (" + from + ")");
      }
      return new Asked(from, to);
    }
  }

  /** How many buckets the range holds. */
  public long points() {
    return Duration.between(from, to).toMillis() / interval.step().toMillis();
  }

  private static Instant instant(String name, String text, Instant now) {
    String value = text.trim();
    if (value.equals("now")) {
      return now;
    }
    Matcher relative = RELATIVE.matcher(value);
    if (relative.matches()) {
      long amount = Long.parseLong(relative.group(1));
      Duration unit =
          switch (relative.group(2)) {
            case "m" -> Duration.ofMinutes(1);
            case "h" -> Duration.ofHours(1);
            default -> Duration.ofDays(1);
          };
      return now.minus(unit.multipliedBy(amount));
    }
    try {
      Instant instant = Instant.parse(value);
      if (instant.isBefore(EARLIEST) || instant.isAfter(LATEST)) {
        throw new ApiException(
            400, name + " must be between " + EARLIEST + " and " + LATEST + ", not " + instant);
      }
      return instant;
    } catch (DateTimeParseException e) {
      throw new ApiException(
          400,
          name
              + " must be an ISO-8601 instant (2026-11-29T10:00:00Z), 'now' or a span"
              + " back from now such as 90m, 24h or 7d, not '"
              + ApiException.excerpt(value)
              + "'");
    }
  }
}
