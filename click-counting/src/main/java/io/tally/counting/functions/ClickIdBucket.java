package io.tally.counting.functions;

import java.util.Arrays;
import java.util.UUID;

/**
 * The version-7 click ids of one minute and one key group that a dedup subtask has seen: a hash set
 * on the heap, and the ids added since they were last stored ({@link #takeUnstored}).
 *
 * <p>A UUIDv7 carries the millisecond it was made in its first 48 bits. Within a known minute that
 * millisecond takes 16 bits, and the rest of the id is 74 random bits and 6 fixed ones, so an id is
 * kept as an int ({@link #high}: the millisecond in the minute and the 12 random bits beside the
 * version) and a long (the id's second half, variant bits and all), nothing lost. A stored chunk
 * holds its ids sorted by their first part, each as the varint difference from the one before and
 * the 8 bytes of its second half: about 11 bytes an id for the hundreds of ids a chunk of a busy
 * minute holds, at most 12.
 *
 * <p>Mutable and not thread-safe: one operator owns it.
 */
final class ClickIdBucket {

  /** The first byte of a stored chunk: its format. */
  private static final byte CHUNK_FORMAT = 1;

  private static final int INITIAL_SLOTS = 16;

  /** Second halves by slot; 0 marks an empty slot, since a version-7 id's has its top bit set. */
  private long[] lows = new long[INITIAL_SLOTS];

  private int[] highs = new int[INITIAL_SLOTS];
  private int size;

  /** The ids added since the last {@link #takeUnstored}, as {@link #highs} and {@link #lows}. */
  private int[] unstoredHighs = new int[0];

  private long[] unstoredLows = new long[0];
  private int unstoredCount;

  /** Whether {@code id} is a version-7 UUID of RFC 9562's variant, which this bucket can keep. */
  static boolean fits(UUID id) {
    return id.version() == 7 && id.variant() == 2;
  }

  /** Whether {@code id} {@link #fits} and was made at {@code since} (epoch millis) or later. */
  static boolean fitsMadeFrom(UUID id, long since) {
    return fits(id) && madeAt(id) >= since;
  }

  /** The epoch millisecond a version-7 id was made in. */
  static long madeAt(UUID id) {
    return id.getMostSignificantBits() >>> 16;
  }

  /** The epoch minute a version-7 id was made in. */
  static long minuteOf(UUID id) {
    return Math.floorDiv(madeAt(id), 60_000L);
  }

  /** The stored first part of a version-7 id: its millisecond in its minute, then 12 bits. */
  static int high(UUID id) {
    long millisInMinute = Math.floorMod(madeAt(id), 60_000L);
    return (int) (millisInMinute << 12 | id.getMostSignificantBits() & 0xFFF);
  }

  /** How many ids it holds. */
  int size() {
    return size;
  }

  /**
   * Adds an id as {@link #high} and its second half; returns false when it was there already. A new
   * id is unstored until the next {@link #takeUnstored}.
   */
  boolean add(int high, long low) {
    if (!insert(high, low)) {
      return false;
    }
    if (unstoredCount == unstoredHighs.length) {
      int grown = Math.max(4, unstoredCount * 2);
      unstoredHighs = Arrays.copyOf(unstoredHighs, grown);
      unstoredLows = Arrays.copyOf(unstoredLows, grown);
    }
    unstoredHighs[unstoredCount] = high;
    unstoredLows[unstoredCount] = low;
    unstoredCount++;
    return true;
  }

  /** Adds every id of a stored chunk ({@link #takeUnstored}), as stored already. */
  void addStored(byte[] chunk) {
    forEachStored(chunk, (high, low) -> insert(high, low));
  }

  /** The ids added since the last call, as one chunk to store; null when there are none. */
  byte[] takeUnstored() {
    int count = unstoredCount;
    if (count == 0) {
      return null;
    }
    // Sorted by first part, each with its place in unstored: first parts are below 2^28.
    long[] order = new long[count];
    for (int i = 0; i < count; i++) {
      order[i] = (long) unstoredHighs[i] << 32 | i;
    }
    Arrays.sort(order);
    byte[] chunk = new byte[1 + count * (5 + 8)];
    chunk[0] = CHUNK_FORMAT;
    int at = 1;
    int previous = 0;
    for (long entry : order) {
      int high = (int) (entry >>> 32);
      at = writeVarint(chunk, at, high - previous);
      previous = high;
      long low = unstoredLows[(int) entry];
      for (int i = 0; i < 8; i++) {
        chunk[at++] = (byte) (low >>> 56 - 8 * i);
      }
    }
    unstoredHighs = new int[0];
    unstoredLows = new long[0];
    unstoredCount = 0;
    return Arrays.copyOf(chunk, at);
  }

  /** What is done with each id of a stored chunk. */
  private interface StoredId {
    void accept(int high, long low);
  }

  private static void forEachStored(byte[] chunk, StoredId each) {
    if (chunk.length == 0 || chunk[0] != CHUNK_FORMAT) {
      throw new IllegalStateException("a stored chunk of click ids in an unknown format");
    }
    int at = 1;
    int high = 0;
    while (at < chunk.length) {
      int delta = 0;
      for (int shift = 0; ; shift += 7) {
        byte b = chunk[at++];
        delta |= (b & 0x7F) << shift;
        if (b >= 0) {
          break;
        }
      }
      high += delta;
      long low = 0;
      for (int i = 0; i < 8; i++) {
        low = low << 8 | chunk[at++] & 0xFF;
      }
      each.accept(high, low);
    }
  }

  private static int writeVarint(byte[] to, int at, int value) {
    while ((value & ~0x7F) != 0) {
      to[at++] = (byte) (value & 0x7F | 0x80);
      value >>>= 7;
    }
    to[at++] = (byte) value;
    return at;
  }

  private boolean insert(int high, long low) {
    if (2 * (size + 1) > lows.length) {
      grow();
    }
    int mask = lows.length - 1;
    for (int slot = spread(high, low) & mask; ; slot = (slot + 1) & mask) {
      if (lows[slot] == 0) {
        lows[slot] = low;
        highs[slot] = high;
        size++;
        return true;
      }
      if (lows[slot] == low && highs[slot] == high) {
        return false;
      }
    }
  }

  private void grow() {
    long[] oldLows = lows;
    int[] oldHighs = highs;
    lows = new long[oldLows.length * 2];
    highs = new int[oldHighs.length * 2];
    size = 0;
    for (int i = 0; i < oldLows.length; i++) {
      if (oldLows[i] != 0) {
        insert(oldHighs[i], oldLows[i]);
      }
    }
  }

  private static int spread(int high, long low) {
    long h = (low ^ (long) high * 0x9E3779B97F4A7C15L) * 0xC2B2AE3D27D4EB4FL;
    return (int) (h ^ h >>> 32);
  }
}
