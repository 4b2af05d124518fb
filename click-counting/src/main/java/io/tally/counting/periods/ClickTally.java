package io.tally.counting.periods;

import io.tally.counting.records.Click;
import io.tally.counting.records.DimensionCount;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Map;

/**
 * Running totals of a set of clicks of one link: human and bot clicks, new visitors, and clicks per
 * dimension value. A subtask's partial minute, and the totals of a link's minutes, hours and days
 * ({@link LinkPeriods}).
 *
 * <p>A dimension may keep a bounded number of values: once it holds {@code maxValues}, it keeps the
 * values of least {@link #rank} it has met and counts the clicks of every other value under {@link
 * DimensionCount#OTHER}, so a dimension's values always add up to its clicks and a flood of made-up
 * referrers cannot grow a link's rows or slow its counting. Which values are kept depends on the
 * set of values met only, never on the order they came in, so a replay after a restore, a rescale
 * and reconciliation all keep the same ones (ADR-006). A kept value that a value of less rank
 * displaces takes its clicks to {@code (other)} and is never kept again, since the largest kept
 * rank only falls; {@link #replacedDimensions} tells the writer its row must go.
 *
 * <p>Mutable, with array fields of which the first {@link #size} slots are in use; the serializers
 * write only those ({@code MinuteTotalsSerializer}, {@code LinkPeriodsSerializer}). Values are
 * found by a linear search while there are few of them, which is the common case, and through a
 * hash index built on the heap once there are many.
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
   * The dimension (an index into {@link #DIMENSIONS}) of each slot; the first {@link #size} are in
   * use.
   */
  public byte[] dimensions = new byte[0];

  /** The value of each slot. */
  public String[] values = new String[0];

  /** Clicks per slot. */
  public long[] counts = new long[0];

  /** How many slots are in use. */
  public int size;

  /**
   * The keys of a subtask's partial's new visitors in the day ({@link Click#addsToDaySketch}), on
   * their way to the day's visitor sketch ({@link LinkPeriods}); the first {@link
   * #dayVisitorKeyCount} are in use. Periods keep a sketch instead.
   */
  public long[] dayVisitorKeys = new long[0];

  /** How many {@link #dayVisitorKeys} are in use. */
  public int dayVisitorKeyCount;

  /**
   * The dimensions (bits by index) in which a kept value was displaced by one of less rank since
   * the owner last cleared this; kept on the heap only.
   */
  public transient int replacedDimensions;

  /** No bound on the values a dimension keeps. */
  public static final int UNBOUNDED = Integer.MAX_VALUE;

  public static final String COUNTRY = "country";
  public static final String REFERRER = "referrer";
  public static final String BROWSER = "browser";
  public static final String OS = "os";
  public static final String DEVICE = "device";
  public static final String BOT_KIND = "bot_kind";
  public static final String UTM_SOURCE = "utm_source";
  public static final String UTM_MEDIUM = "utm_medium";
  public static final String UTM_CAMPAIGN = "utm_campaign";

  /**
   * The dimensions' names, as in {@code click_dimensions_hourly.dimension}, by index. An index is
   * kept in state ({@link #dimensions}): a new dimension goes at the end.
   */
  public static final String[] DIMENSIONS = {
    COUNTRY, REFERRER, BROWSER, OS, DEVICE, BOT_KIND, UTM_SOURCE, UTM_MEDIUM, UTM_CAMPAIGN
  };

  private static final int COUNTRY_INDEX = 0;
  private static final int REFERRER_INDEX = 1;
  private static final int BROWSER_INDEX = 2;
  private static final int OS_INDEX = 3;
  private static final int DEVICE_INDEX = 4;
  private static final int BOT_KIND_INDEX = 5;
  private static final int UTM_SOURCE_INDEX = 6;
  private static final int UTM_MEDIUM_INDEX = 7;
  private static final int UTM_CAMPAIGN_INDEX = 8;

  private static final int LINEAR_SEARCH_LIMIT = 24;

  /** Slots by dimension, then value, once there are many; rebuilt when stale. */
  private transient Map<String, Integer>[] index;

  private transient String[] indexedValues;
  private transient int indexedSize;

  /** The kept slot of greatest rank per dimension, -1 for none; rebuilt when stale. */
  private transient int[] greatestKeptSlots;

  private transient String[] rankedValues;
  private transient int rankedSize;

  /** Values per dimension, {@link DimensionCount#OTHER} left out; null until a bound is checked. */
  private transient int[] valuesPerDimension;

  private transient String[] countedValues;
  private transient int countedSize;

  /** Counts one click, keeping every value. */
  public ClickTally add(Click click) {
    return add(click, UNBOUNDED);
  }

  /**
   * Counts one click: a person's under every human dimension (the campaign's only when it was
   * tagged, so an untagged click adds no campaign rows), a bot's under its kind only, each
   * dimension keeping at most {@code maxValues} values.
   */
  public ClickTally add(Click click, int maxValues) {
    addTotals(click);
    if (click.bot()) {
      count(BOT_KIND_INDEX, click.botKind(), 1, maxValues);
      return this;
    }
    count(COUNTRY_INDEX, click.country(), 1, maxValues);
    count(REFERRER_INDEX, click.referrer(), 1, maxValues);
    count(BROWSER_INDEX, click.browser(), 1, maxValues);
    count(OS_INDEX, click.os(), 1, maxValues);
    count(DEVICE_INDEX, click.device(), 1, maxValues);
    if (click.tagged()) {
      count(UTM_SOURCE_INDEX, click.utmSource(), 1, maxValues);
      count(UTM_MEDIUM_INDEX, click.utmMedium(), 1, maxValues);
      count(UTM_CAMPAIGN_INDEX, click.utmCampaign(), 1, maxValues);
    }
    return this;
  }

  /**
   * Counts one click into a subtask's partial: as {@link #add(Click)}, and keeping its visitor's
   * key for the day's visitor sketch.
   */
  public ClickTally addToPartial(Click click) {
    add(click);
    if (click.addsToDaySketch()) {
      if (dayVisitorKeyCount == dayVisitorKeys.length) {
        int length = Math.max(4, dayVisitorKeyCount + dayVisitorKeyCount / 2);
        dayVisitorKeys = Arrays.copyOf(dayVisitorKeys, length);
      }
      dayVisitorKeys[dayVisitorKeyCount++] = click.rangeVisitor();
    }
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

  /** Adds another tally into this one, keeping every value. */
  public ClickTally addAll(ClickTally other) {
    return addAll(other, UNBOUNDED);
  }

  /** Adds another tally into this one, each dimension keeping at most {@code maxValues} values. */
  public ClickTally addAll(ClickTally other, int maxValues) {
    addTotals(other);
    for (int i = 0; i < other.size; i++) {
      count(other.dimensions[i], other.values[i], other.counts[i], maxValues);
    }
    return this;
  }

  /** The dimension's name of a slot. */
  public String dimension(int slot) {
    return DIMENSIONS[dimensions[slot]];
  }

  /** The clicks under one dimension value, 0 when absent. */
  public long count(String dimension, String value) {
    int slot = slotOf(Arrays.asList(DIMENSIONS).indexOf(dimension), value);
    return slot < 0 ? 0 : counts[slot];
  }

  /**
   * What decides which values a full dimension keeps: the least ranks. A mix of the value's hash
   * code, which the Java language fixes for every JVM, so that values with similar names spread;
   * {@link #BY_RANK} breaks the ties.
   */
  public static long rank(String value) {
    long h = value.hashCode() * 0x9E3779B97F4A7C15L;
    h ^= h >>> 32;
    h *= 0xC2B2AE3D27D4EB4FL;
    return h ^ (h >>> 29);
  }

  /** Values in the order a full dimension keeps them: by {@link #rank}, ties by natural order. */
  public static final Comparator<String> BY_RANK =
      Comparator.comparingLong(ClickTally::rank).thenComparing(Comparator.naturalOrder());

  private static boolean ranksBefore(String a, String b) {
    return BY_RANK.compare(a, b) < 0;
  }

  private void count(int dimension, String value, long n, int maxValues) {
    int slot = slotOf(dimension, value);
    if (slot < 0 && size >= maxValues && valuesIn(dimension) >= maxValues) {
      int greatest = greatestKept(dimension);
      // A value spelled (other) is counted there, whatever its rank.
      if (greatest >= 0
          && !value.equals(DimensionCount.OTHER)
          && ranksBefore(value, values[greatest])) {
        displace(greatest, value, n);
        return;
      }
      value = DimensionCount.OTHER;
      slot = slotOf(dimension, DimensionCount.OTHER);
    }
    if (slot < 0) {
      append(dimension, value, n);
    } else {
      counts[slot] += n;
    }
  }

  private int slotOf(int dimension, String value) {
    if (size > LINEAR_SEARCH_LIMIT) {
      Integer slot = index()[dimension].get(value);
      return slot == null ? -1 : slot;
    }
    for (int i = 0; i < size; i++) {
      if (dimensions[i] == dimension && values[i].equals(value)) {
        return i;
      }
    }
    return -1;
  }

  /** Puts {@code value} in a kept value's slot, that value's clicks going to {@code (other)}. */
  private void displace(int slot, String value, long n) {
    int dimension = dimensions[slot];
    long displaced = counts[slot];
    if (index != null && indexedValues == values && indexedSize == size) {
      index[dimension].remove(values[slot]);
      index[dimension].put(value, slot);
    }
    values[slot] = value;
    counts[slot] = n;
    greatestKeptSlots = null;
    replacedDimensions |= 1 << dimension;
    count(dimension, DimensionCount.OTHER, displaced, UNBOUNDED);
  }

  private int greatestKept(int dimension) {
    if (greatestKeptSlots == null || rankedValues != values || rankedSize != size) {
      greatestKeptSlots = new int[DIMENSIONS.length];
      Arrays.fill(greatestKeptSlots, -1);
      for (int i = 0; i < size; i++) {
        int g = greatestKeptSlots[dimensions[i]];
        if (!values[i].equals(DimensionCount.OTHER)
            && (g < 0 || ranksBefore(values[g], values[i]))) {
          greatestKeptSlots[dimensions[i]] = i;
        }
      }
      rankedValues = values;
      rankedSize = size;
    }
    return greatestKeptSlots[dimension];
  }

  private int valuesIn(int dimension) {
    if (valuesPerDimension == null || countedValues != values || countedSize != size) {
      valuesPerDimension = new int[DIMENSIONS.length];
      for (int i = 0; i < size; i++) {
        if (!values[i].equals(DimensionCount.OTHER)) {
          valuesPerDimension[dimensions[i]]++;
        }
      }
      countedValues = values;
      countedSize = size;
    }
    return valuesPerDimension[dimension];
  }

  @SuppressWarnings("unchecked")
  private Map<String, Integer>[] index() {
    if (index == null || indexedValues != values || indexedSize != size) {
      index = new Map[DIMENSIONS.length];
      for (int d = 0; d < DIMENSIONS.length; d++) {
        index[d] = new HashMap<>();
      }
      for (int i = 0; i < size; i++) {
        index[dimensions[i]].put(values[i], i);
      }
      indexedValues = values;
      indexedSize = size;
    }
    return index;
  }

  private void append(int dimension, String value, long n) {
    boolean indexed = index != null && indexedValues == values && indexedSize == size;
    boolean counted = valuesPerDimension != null && countedValues == values && countedSize == size;
    if (size == values.length) {
      // Room for a click's dimensions at once, then by half again.
      int length = Math.max(DIMENSIONS.length, size + size / 2);
      dimensions = Arrays.copyOf(dimensions, length);
      values = Arrays.copyOf(values, length);
      counts = Arrays.copyOf(counts, length);
    }
    dimensions[size] = (byte) dimension;
    values[size] = value;
    counts[size] = n;
    if (indexed) {
      index[dimension].put(value, size);
      indexedValues = values;
      indexedSize = size + 1;
    }
    if (counted) {
      if (!value.equals(DimensionCount.OTHER)) {
        valuesPerDimension[dimension]++;
      }
      countedValues = values;
      countedSize = size + 1;
    }
    size++;
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof ClickTally t)
        || t.clicks != clicks
        || t.botClicks != botClicks
        || t.hourVisitors != hourVisitors
        || t.dayVisitors != dayVisitors
        || t.size != size
        || !Arrays.equals(
            t.dayVisitorKeys, 0, t.dayVisitorKeyCount, dayVisitorKeys, 0, dayVisitorKeyCount)) {
      return false;
    }
    for (int i = 0; i < size; i++) {
      if (t.count(dimension(i), values[i]) != counts[i]) {
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
    StringBuilder s =
        new StringBuilder(
            "ClickTally[clicks="
                + clicks
                + ", bots="
                + botClicks
                + ", hourVisitors="
                + hourVisitors
                + ", dayVisitors="
                + dayVisitors);
    for (int i = 0; i < size; i++) {
      s.append(", ")
          .append(dimension(i))
          .append('=')
          .append(values[i])
          .append(':')
          .append(counts[i]);
    }
    return s.append(']').toString();
  }
}
