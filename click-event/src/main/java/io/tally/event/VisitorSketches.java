package io.tally.event;

import java.util.HexFormat;
import org.apache.datasketches.cpc.CpcSketch;
import org.apache.datasketches.cpc.CpcUnion;

/**
 * Unique visitors over any range of days. The click job and reconciliation keep, per link and UTC
 * day, a CPC sketch (Apache DataSketches) of the {@link ClickEvent#rangeVisitor() range visitor
 * keys} of the day's visitors; the stats API unions the sketches of a range's days and reads the
 * estimate. A union is idempotent, so a day's visitors added twice, by a replay or a restart, leave
 * the same sketch.
 *
 * <p>{@link #LG_K} sets both a union's error and how large a busy day's sketch grows; {@code bench
 * uniques} measures them (docs/benchmarks.md).
 */
public final class VisitorSketches {

  /** The sketches' size parameter: 2^14 slots. Every sketch of a link must share it. */
  public static final int LG_K = 14;

  private static final int KEY_DIGITS = 16;
  private static final HexFormat HEX = HexFormat.of();

  private VisitorSketches() {}

  /** An empty sketch. */
  public static CpcSketch newSketch() {
    return new CpcSketch(LG_K);
  }

  /**
   * The sketch as stored: the same visitors give the same bytes whatever order they came in, so
   * that a recount and the stream's sketch of one day compare equal byte for byte. Null for no
   * sketch or an empty one, which is stored as no sketch at all.
   */
  public static byte[] toBytes(CpcSketch sketch) {
    if (sketch == null || sketch.isEmpty()) {
      return null;
    }
    CpcUnion union = new CpcUnion(LG_K);
    union.update(sketch);
    return union.getResult().toByteArray();
  }

  /** A stored sketch read back. */
  public static CpcSketch fromBytes(byte[] bytes) {
    return CpcSketch.heapify(bytes);
  }

  /** The estimated number of distinct visitors in the union of stored sketches. */
  public static long estimateUnion(Iterable<byte[]> sketches) {
    CpcUnion union = new CpcUnion(LG_K);
    for (byte[] bytes : sketches) {
      union.update(fromBytes(bytes));
    }
    return Math.round(union.getResult().getEstimate());
  }

  /** A range visitor key as the click event writes it: 16 lower-case hex digits. */
  public static String formatKey(long key) {
    return HEX.toHexDigits(key);
  }

  /**
   * A range visitor key from its 16 hex digits.
   *
   * @throws IllegalArgumentException naming the field when {@code text} is not 16 hex digits
   */
  public static long parseKey(String text) {
    return parseKey(text.toCharArray(), 0, text.length());
  }

  /**
   * A range visitor key from 16 hex digits in {@code chars} from {@code offset}: the streaming job
   * decodes every click, so its parser hands over its buffer rather than a new string.
   *
   * @throws IllegalArgumentException naming the field when they are not 16 hex digits
   */
  public static long parseKey(char[] chars, int offset, int length) {
    if (length != KEY_DIGITS) {
      throw notAKey();
    }
    long key = 0;
    for (int i = offset; i < offset + length; i++) {
      if (!HexFormat.isHexDigit(chars[i])) {
        throw notAKey();
      }
      key = key << 4 | HexFormat.fromHexDigit(chars[i]);
    }
    return key;
  }

  private static IllegalArgumentException notAKey() {
    return new IllegalArgumentException("range_visitor is not " + KEY_DIGITS + " hex digits");
  }
}
