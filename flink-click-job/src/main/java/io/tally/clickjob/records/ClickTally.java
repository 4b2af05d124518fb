package io.tally.clickjob.records;

import java.util.Arrays;

/**
 * Running totals of a set of clicks of one link: human and bot clicks, new visitors, and clicks per
 * dimension value. A subtask's partial minute, and the totals of a link's minutes, hours and days
 * ({@link LinkPeriods}).
 *
 * <p>A mutable Flink POJO with array fields rather than a map, so that Flink gives it its own serializer
 * instead of falling back to Kryo. A minute of one link holds a few dozen dimension values at most, so a
 * linear search is the cheap lookup.
 */
public final class ClickTally {

  /** Human clicks. */
  public long clicks;
  /** Bot clicks of every kind. */
  public long botClicks;
  /** Human clicks that were their visitor's first on the link in their hour. */
  public long hourVisitors;
  /** Human clicks that were their visitor's first on the link in their UTC day. */
  public long dayVisitors;
  /**
   * Dimension keys, {@code dimension + SEPARATOR + value}; the first {@link #size} are in use. The arrays are
   * kept exactly as long as they are full: Flink writes every slot of them, nulls included, on every click.
   */
  public String[] keys = new String[0];
  /** Clicks per key. */
  public long[] counts = new long[0];
  /** How many keys are in use. */
  public int size;

  /** Separates a dimension's name from its value in a key; no value holds it. */
  public static final char SEPARATOR = '\u001f';

  public static final String COUNTRY = "country";
  public static final String REFERRER = "referrer";
  public static final String BROWSER = "browser";
  public static final String OS = "os";
  public static final String DEVICE = "device";
  public static final String BOT_KIND = "bot_kind";

  /** Counts one click: a person's under every human dimension, a bot's under its kind only. */
  public ClickTally add(Click click) {
    if (click.bot()) {
      botClicks++;
      count(BOT_KIND, click.botKind());
      return this;
    }
    clicks++;
    if (click.newVisitorInHour()) {
      hourVisitors++;
    }
    if (click.newVisitorInDay()) {
      dayVisitors++;
    }
    count(COUNTRY, click.country());
    count(REFERRER, click.referrer());
    count(BROWSER, click.browser());
    count(OS, click.os());
    count(DEVICE, click.device());
    return this;
  }

  /** Counts one click in the totals only, not under its dimension values. */
  public ClickTally addTotals(Click click) {
    if (click.bot()) {
      botClicks++;
    } else {
      clicks++;
      if (click.newVisitorInHour()) {
        hourVisitors++;
      }
      if (click.newVisitorInDay()) {
        dayVisitors++;
      }
    }
    return this;
  }

  /** Adds another tally's totals into this one, without its clicks per dimension value. */
  public ClickTally addTotals(ClickTally other) {
    clicks += other.clicks;
    botClicks += other.botClicks;
    hourVisitors += other.hourVisitors;
    dayVisitors += other.dayVisitors;
    return this;
  }

  /** Adds another tally into this one. */
  public ClickTally addAll(ClickTally other) {
    addTotals(other);
    for (int i = 0; i < other.size; i++) {
      addTo(other.keys[i], other.counts[i]);
    }
    return this;
  }

  /** Whether the tally counts nothing. */
  public boolean isEmpty() {
    return clicks == 0 && botClicks == 0 && size == 0;
  }

  /** The clicks under one key, 0 when absent. */
  public long count(String key) {
    int i = indexOf(key);
    return i < 0 ? 0 : counts[i];
  }

  public static String key(String dimension, String value) {
    return dimension + SEPARATOR + value;
  }

  /** The dimension of a key. */
  public static String dimensionOf(String key) {
    return key.substring(0, key.indexOf(SEPARATOR));
  }

  /** The value of a key. */
  public static String valueOf(String key) {
    return key.substring(key.indexOf(SEPARATOR) + 1);
  }

  /**
   * Counts one click under a dimension value. Called for every click: the key is built only when the
   * value is new to the tally, not to look it up.
   */
  private void count(String dimension, String value) {
    int length = dimension.length() + 1 + value.length();
    for (int i = 0; i < size; i++) {
      String key = keys[i];
      if (key.length() == length && key.startsWith(dimension) && key.charAt(dimension.length()) == SEPARATOR
          && key.endsWith(value)) {
        counts[i]++;
        return;
      }
    }
    append(key(dimension, value), 1);
  }

  private void addTo(String key, long n) {
    int i = indexOf(key);
    if (i >= 0) {
      counts[i] += n;
      return;
    }
    append(key, n);
  }

  private void append(String key, long n) {
    if (size == keys.length) {
      keys = Arrays.copyOf(keys, size + 1);
      counts = Arrays.copyOf(counts, size + 1);
    }
    keys[size] = key;
    counts[size] = n;
    size++;
  }

  private int indexOf(String key) {
    for (int i = 0; i < size; i++) {
      if (keys[i].equals(key)) {
        return i;
      }
    }
    return -1;
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof ClickTally t) || t.clicks != clicks || t.botClicks != botClicks
        || t.hourVisitors != hourVisitors || t.dayVisitors != dayVisitors || t.size != size) {
      return false;
    }
    for (int i = 0; i < size; i++) {
      if (t.count(keys[i]) != counts[i]) {
        return false;
      }
    }
    return true;
  }

  @Override
  public int hashCode() {
    return Long.hashCode(clicks * 31 + botClicks);
  }

  @Override
  public String toString() {
    StringBuilder s = new StringBuilder("ClickTally[clicks=" + clicks + ", bots=" + botClicks + ", hourVisitors="
        + hourVisitors + ", dayVisitors=" + dayVisitors);
    for (int i = 0; i < size; i++) {
      s.append(", ").append(keys[i].replace(SEPARATOR, '=')).append(':').append(counts[i]);
    }
    return s.append(']').toString();
  }
}
