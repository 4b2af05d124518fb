package io.tally.chaos;

import io.tally.clickjob.classify.UserAgentClassifier;
import io.tally.clickjob.classify.UserAgentFacts;
import io.tally.clickjob.records.ClickTally;
import io.tally.event.ClickEvent;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * What the tables must hold for the distinct clicks a scenario sent: per (code, minute) human and bot clicks,
 * per hour and day the same plus distinct visitors, and per hour the breakdown counts. Each click is classed
 * by the job's own user-agent classifier, so the truth and the job agree on what a bot is; everything else
 * (duplicates, restarts, faults) is the job's to get right. Keys are the rows' keys rendered as text, the
 * same way {@link Drift} renders what it reads.
 */
public final class ClickTruth {

  static final long MINUTE = 60_000;
  static final long HOUR = 3_600_000;
  static final long DAY = 86_400_000;

  /** Rows of click_counts: key → {clicks, bot_clicks}. */
  final Map<String, long[]> minutes = new HashMap<>();
  /** Rows of click_hourly: key → {clicks, bot_clicks, visitors}. */
  final Map<String, long[]> hours = new HashMap<>();
  /** Rows of click_daily: key → {clicks, bot_clicks, visitors}. */
  final Map<String, long[]> days = new HashMap<>();
  /** Rows of click_dimensions_hourly: key → {clicks}. */
  final Map<String, long[]> dimensions = new HashMap<>();
  private final Map<String, Set<String>> hourVisitors = new HashMap<>();
  private final Map<String, Set<String>> dayVisitors = new HashMap<>();
  private final Set<String> clickIds = new HashSet<>();
  private long humans;
  private long bots;

  /** Counts a click once; a click id seen before is a duplicate delivery and changes nothing. */
  public synchronized boolean add(ClickEvent click) {
    if (!clickIds.add(click.clickId().toString())) {
      return false;
    }
    UserAgentFacts facts = UserAgentClassifier.shared().classify(click.userAgent(), click.head());
    int column = facts.bot() ? 1 : 0;
    String hourKey = key(click.code(), floor(click.ts(), HOUR));
    String dayKey = key(click.code(), LocalDay.of(click.ts()));
    minutes.computeIfAbsent(key(click.code(), floor(click.ts(), MINUTE)), k -> new long[2])[column]++;
    long[] hour = hours.computeIfAbsent(hourKey, k -> new long[3]);
    long[] day = days.computeIfAbsent(dayKey, k -> new long[3]);
    hour[column]++;
    day[column]++;
    if (facts.bot()) {
      bots++;
      breakdown(hourKey, ClickTally.BOT_KIND, facts.botKind());
      return true;
    }
    humans++;
    if (!click.visitor().isEmpty()) {
      hour[2] = visitors(hourVisitors, hourKey, click.visitor());
      day[2] = visitors(dayVisitors, dayKey, click.visitor());
    }
    breakdown(hourKey, ClickTally.COUNTRY, click.country());
    breakdown(hourKey, ClickTally.REFERRER, click.referrerDomain());
    breakdown(hourKey, ClickTally.BROWSER, facts.browser());
    breakdown(hourKey, ClickTally.OS, facts.os());
    breakdown(hourKey, ClickTally.DEVICE, facts.device());
    return true;
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
  public synchronized boolean contains(String clickId) {
    return clickIds.contains(clickId);
  }

  private void breakdown(String hourKey, String dimension, String value) {
    dimensions.computeIfAbsent(hourKey + "|" + dimension + "|" + value, k -> new long[1])[0]++;
  }

  private static long visitors(Map<String, Set<String>> sets, String key, String visitor) {
    Set<String> set = sets.computeIfAbsent(key, k -> new HashSet<>());
    set.add(visitor);
    return set.size();
  }

  static long floor(long millis, long unit) {
    return Math.floorDiv(millis, unit) * unit;
  }

  static String key(String code, long instant) {
    return code + "|" + instant;
  }

  /** A UTC day as the epoch millisecond of its start, the form {@link Drift} reads a DATE column in. */
  static final class LocalDay {
    private LocalDay() {}

    static long of(long millis) {
      return Instant.ofEpochMilli(millis).atZone(ZoneOffset.UTC).toLocalDate().atStartOfDay(ZoneOffset.UTC)
          .toInstant().toEpochMilli();
    }
  }
}
