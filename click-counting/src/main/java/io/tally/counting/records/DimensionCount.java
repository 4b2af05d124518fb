package io.tally.counting.records;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;

/**
 * The clicks of one link in one hour or UTC day with one value of a dimension: human clicks for
 * {@code country}, {@code referrer}, {@code browser}, {@code os} and {@code device}, bot clicks for
 * {@code bot_kind}. A full value, never an increment.
 *
 * @param code link code
 * @param periodStart start of the hour or day, epoch milliseconds
 * @param dimension the dimension's name, as in {@code click_dimensions_hourly.dimension}
 * @param value the value, {@code ""} when unknown or absent
 * @param clicks clicks with that value in the period
 */
public record DimensionCount(
    String code, long periodStart, String dimension, String value, long clicks) {

  /** The row this count writes: its table's key. */
  public List<Object> key() {
    return List.of(code, periodStart, dimension, value);
  }

  /**
   * What the values a full dimension does not keep are counted under; no real value is written so.
   */
  public static final String OTHER = "(other)";

  /**
   * The prefix of a stand-in's value: the read side adds every value that starts so to {@link
   * #OTHER}.
   */
  public static final String STAND_IN_PREFIX = OTHER + " ";

  /**
   * The row that carries this count's clicks when PostgreSQL refuses its value: the same clicks
   * under a value made of a digest of the refused one, printable ASCII that any text column and
   * index takes. One refused value always gets the same stand-in, so that its later totals, a
   * replay and a recount all write the same row, which the read side counts under {@link #OTHER};
   * the link's values still add up to its clicks.
   */
  public DimensionCount standIn() {
    try {
      byte[] digest =
          MessageDigest.getInstance("SHA-256").digest(value.getBytes(StandardCharsets.UTF_16BE));
      return new DimensionCount(
          code, periodStart, dimension, STAND_IN_PREFIX + HexFormat.of().formatHex(digest), clicks);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is part of every JDK", e);
    }
  }
}
