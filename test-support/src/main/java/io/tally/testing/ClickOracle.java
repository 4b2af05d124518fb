package io.tally.testing;

import io.tally.event.ClickEvent;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Collectors;
import org.apache.datasketches.cpc.CpcSketch;

/**
 * What the read side's tables must hold for a set of click events, read plainly from the counting
 * rules and written without any of the job's code: each click id counts once; a click counts in the
 * UTC minute, hour and day of its time; an hour and a day count the distinct visitors among their
 * people's clicks (a click without a visitor hash counts no visitor); an hour counts a person's
 * click under its country, referrer, browser, OS and device (and its campaign's tags when it has
 * any), a bot's under its kind, and a day likewise. What a client is (a bot of which kind, which
 * browser) the caller says: the job's tests from a table of the agents they send, never by asking
 * the classifier they check.
 *
 * <p>The one oracle of the job's tests and of {@code ./tally chaos}. Keys are the rows' keys as
 * text: {@code code@start} for minutes, hours and days (start in epoch milliseconds, a day at its
 * UTC midnight) and {@code code@start@dimension@value} for breakdowns. Every dimension keeps all
 * its values: a test that sends more per link and period than the job keeps compares the kept ones
 * ({@link #keptValues}) value by value and {@code (other)} with the rest.
 */
public final class ClickOracle {

  public static final long MINUTE = 60_000;
  public static final long HOUR = 3_600_000;
  public static final long DAY = 24 * HOUR;

  /** What a full breakdown counts the values it does not keep under. */
  public static final String OTHER = "(other)";

  /** What a click's client is; {@code botKind} is empty for a person. */
  public record Facts(String botKind, String browser, String os, String device) {
    public boolean bot() {
      return !botKind.isEmpty();
    }
  }

  private final Map<String, long[]> minutes = new HashMap<>();
  private final Map<String, long[]> hours = new HashMap<>();
  private final Map<String, long[]> days = new HashMap<>();
  private final Map<String, Long> dimensions = new HashMap<>();
  private final Map<String, Long> dayDimensions = new HashMap<>();
  private final Map<String, Set<String>> hourVisitors = new HashMap<>();
  private final Map<String, Set<String>> dayVisitors = new HashMap<>();
  private final Map<String, Set<Long>> dayVisitorKeys = new HashMap<>();
  private final Set<String> daysWithKeylessVisitors = new HashSet<>();
  private final Set<UUID> clickIds = new HashSet<>();
  private long humans;
  private long bots;

  /**
   * An empty oracle that reads clients from the table of those the tests send ({@link Clients}).
   */
  public ClickOracle() {}

  /**
   * Counts a click; a click id counted before is a duplicate delivery: it changes nothing, and
   * false comes back.
   */
  public boolean add(ClickEvent click) {
    return add(click, Clients.facts(click));
  }

  /**
   * As {@link #add(ClickEvent)}, for a click whose client the caller states: an agent a client made
   * up, which no table of real clients holds.
   */
  public synchronized boolean add(ClickEvent click, Facts facts) {
    if (!clickIds.add(click.clickId())) {
      return false;
    }
    int column = facts.bot() ? 1 : 0;
    String hourKey = key(click.code(), floor(click.ts(), HOUR));
    String dayKey = key(click.code(), floor(click.ts(), DAY));
    minutes
        .computeIfAbsent(key(click.code(), floor(click.ts(), MINUTE)), k -> new long[2])[column]++;
    long[] hour = hours.computeIfAbsent(hourKey, k -> new long[3]);
    long[] day = days.computeIfAbsent(dayKey, k -> new long[3]);
    hour[column]++;
    day[column]++;
    if (facts.bot()) {
      bots++;
      breakdown(hourKey, dayKey, "bot_kind", facts.botKind());
      return true;
    }
    humans++;
    if (!click.visitor().isEmpty()) {
      hour[2] = visitors(hourVisitors, hourKey, click.visitor());
      day[2] = visitors(dayVisitors, dayKey, click.visitor());
      if (click.rangeVisitor() == ClickEvent.NO_RANGE_VISITOR) {
        daysWithKeylessVisitors.add(dayKey);
      } else {
        dayVisitorKeys.computeIfAbsent(dayKey, k -> new HashSet<>()).add(click.rangeVisitor());
      }
    }
    breakdown(hourKey, dayKey, "country", click.country());
    breakdown(hourKey, dayKey, "referrer", click.referrerDomain());
    breakdown(hourKey, dayKey, "browser", facts.browser());
    breakdown(hourKey, dayKey, "os", facts.os());
    breakdown(hourKey, dayKey, "device", facts.device());
    ClickEvent.Campaign campaign = click.campaign();
    if (!campaign.isNone()) {
      breakdown(hourKey, dayKey, "utm_source", campaign.source());
      breakdown(hourKey, dayKey, "utm_medium", campaign.medium());
      breakdown(hourKey, dayKey, "utm_campaign", campaign.campaign());
    }
    return true;
  }

  /** {@code click_counts}: key → {clicks, bot clicks}. */
  public synchronized Map<String, long[]> minutes() {
    return copy(minutes);
  }

  /** {@code click_hourly}: key → {clicks, bot clicks, visitors}. */
  public synchronized Map<String, long[]> hours() {
    return copy(hours);
  }

  /** {@code click_daily}: key → {clicks, bot clicks, visitors}. */
  public synchronized Map<String, long[]> days() {
    return copy(days);
  }

  /**
   * The stored day sketches, keyed as {@link #daySketchMismatches} takes them: a query of two text
   * columns, the row's key and its sketch as hex. Leaves out the days without one.
   */
  public static final String STORED_DAY_SKETCHES =
      "SELECT code || '@' || (extract(epoch FROM day::timestamp AT TIME ZONE 'UTC') *"
          + " 1000)::bigint, encode(visitor_sketch, 'hex') FROM click_daily WHERE visitor_sketch IS"
          + " NOT NULL";

  /**
   * How many distinct visitor keys across days each day that must store a sketch saw: every day
   * with a visitor, unless one of them brought no key (a visitor brings a key on all of its clicks
   * or on none, as one version of redirect-web does), which stores none.
   */
  public synchronized Map<String, Long> dayVisitorKeyCounts() {
    Map<String, Long> counts = new HashMap<>();
    dayVisitorKeys.forEach(
        (key, keys) -> {
          if (!daysWithKeylessVisitors.contains(key)) {
            counts.put(key, (long) keys.size());
          }
        });
    return counts;
  }

  /**
   * The days whose stored sketch ({@link #STORED_DAY_SKETCHES}: key → bytes as hex) is not what
   * this oracle counted, each with why: a day without the sketch it must have, a sketch where none
   * is due, or an estimate off the exact count of its keys by more than the sketch's error allows
   * (2%, and at least one). The sketches are read with the DataSketches library, not the job's
   * code.
   */
  public Map<String, String> daySketchMismatches(Map<String, String> storedHex) {
    Map<String, Long> expected = dayVisitorKeyCounts();
    Map<String, String> mismatches = new HashMap<>();
    expected.forEach(
        (day, count) -> {
          if (!storedHex.containsKey(day)) {
            mismatches.put(day, "no sketch for " + count + " visitors");
          }
        });
    storedHex.forEach(
        (day, hex) -> {
          Long count = expected.get(day);
          if (count == null) {
            mismatches.put(day, "a sketch where none is due");
            return;
          }
          long estimate = Math.round(CpcSketch.heapify(HexFormat.of().parseHex(hex)).getEstimate());
          if (Math.abs(estimate - count) > Math.max(1, Math.ceil(count * 0.02))) {
            mismatches.put(day, "estimates " + estimate + " of " + count + " visitors");
          }
        });
    return mismatches;
  }

  /** {@code click_dimensions_hourly}: key → clicks. */
  public synchronized Map<String, Long> dimensions() {
    return Map.copyOf(dimensions);
  }

  /** {@code click_dimensions_daily}: key → clicks. */
  public synchronized Map<String, Long> dayDimensions() {
    return Map.copyOf(dayDimensions);
  }

  /**
   * {@code click_dimensions_hourly} as a job that keeps {@code maxValues} values per link, hour and
   * dimension writes it: a group of more keeps its {@link #keptValues} and counts the rest under
   * {@code (other)}.
   */
  public synchronized Map<String, Long> dimensions(int maxValues) {
    return bounded(dimensions, maxValues);
  }

  /** {@code click_dimensions_daily} as {@link #dimensions(int)} says. */
  public synchronized Map<String, Long> dayDimensions(int maxValues) {
    return bounded(dayDimensions, maxValues);
  }

  private static Map<String, Long> bounded(Map<String, Long> rows, int maxValues) {
    Map<String, Map<String, Long>> groups = new HashMap<>();
    rows.forEach(
        (key, clicks) -> {
          int valueAt = key.indexOf('@', key.indexOf('@', key.indexOf('@') + 1) + 1);
          groups
              .computeIfAbsent(key.substring(0, valueAt), g -> new HashMap<>())
              .put(key.substring(valueAt + 1), clicks);
        });
    Map<String, Long> written = new HashMap<>();
    groups.forEach(
        (group, values) -> {
          Set<String> kept =
              values.size() > maxValues ? keptValues(values.keySet(), maxValues) : values.keySet();
          values.forEach(
              (value, clicks) ->
                  written.merge(
                      group + "@" + (kept.contains(value) ? value : OTHER), clicks, Long::sum));
        });
    return written;
  }

  /** Distinct clicks counted. */
  public synchronized long distinct() {
    return clickIds.size();
  }

  public synchronized long humans() {
    return humans;
  }

  public synchronized long bots() {
    return bots;
  }

  /** Whether a click with this id was counted. */
  public synchronized boolean contains(UUID clickId) {
    return clickIds.contains(clickId);
  }

  /**
   * The values a breakdown of more than {@code maxValues} values keeps: those of least rank, where
   * a value's rank is its Java hash code multiplied by the 64-bit golden ratio, folded, multiplied
   * again and folded, compared as signed numbers, and ties go to the value first in natural order.
   */
  public static Set<String> keptValues(Collection<String> values, int maxValues) {
    Comparator<String> byRank =
        Comparator.<String>comparingLong(
                value -> {
                  long mixed = value.hashCode() * 0x9E3779B97F4A7C15L;
                  mixed = (mixed ^ (mixed >>> 32)) * 0xC2B2AE3D27D4EB4FL;
                  return mixed ^ (mixed >>> 29);
                })
            .thenComparing(Comparator.naturalOrder());
    return values.stream()
        .sorted(byRank)
        .limit(maxValues)
        .collect(Collectors.toCollection(HashSet::new));
  }

  /** A row's key: a code and a period's start. */
  public static String key(String code, long start) {
    return code + "@" + start;
  }

  public static long floor(long millis, long unit) {
    return Math.floorDiv(millis, unit) * unit;
  }

  private void breakdown(String hourKey, String dayKey, String dimension, String value) {
    dimensions.merge(hourKey + "@" + dimension + "@" + value, 1L, Long::sum);
    dayDimensions.merge(dayKey + "@" + dimension + "@" + value, 1L, Long::sum);
  }

  private static long visitors(Map<String, Set<String>> sets, String key, String visitor) {
    Set<String> set = sets.computeIfAbsent(key, k -> new HashSet<>());
    set.add(visitor);
    return set.size();
  }

  private static Map<String, long[]> copy(Map<String, long[]> rows) {
    Map<String, long[]> copy = new HashMap<>();
    rows.forEach((key, values) -> copy.put(key, values.clone()));
    return copy;
  }
}
