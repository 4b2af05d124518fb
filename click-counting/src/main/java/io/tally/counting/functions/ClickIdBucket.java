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
 * version) and a long (the id's second half, variant bits and all): 12 bytes stored, nothing lost.
 *
 * <p>Mutable and not thread-safe: one operator owns it.
 */
final class ClickIdBucket {

  /** Bytes of one stored id. */
  static final int ID_BYTES = 12;

  private static final int INITIAL_SLOTS = 16;

  /** Second halves by slot; 0 marks an empty slot, since a version-7 id's has its top bit set. */
  private long[] lows = new long[INITIAL_SLOTS];

  private int[] highs = new int[INITIAL_SLOTS];
  private int size;

  /** The ids added since the last {@link #takeUnstored}, {@value #ID_BYTES} bytes each. */
  private byte[] unstored = new byte[0];

  private int unstoredLength;

  /** Whether {@code id} is a version-7 UUID of RFC 9562's variant, which this bucket can keep. */
  static boolean fits(UUID id) {
    return id.version() == 7 && id.variant() == 2;
  }

  /** The epoch minute a version-7 id was made in. */
  static long minuteOf(UUID id) {
    return Math.floorDiv(id.getMostSignificantBits() >>> 16, 60_000L);
  }

  /** The stored first part of a version-7 id: its millisecond in its minute, then 12 bits. */
  static int high(UUID id) {
    long msb = id.getMostSignificantBits();
    long millisInMinute = Math.floorMod(msb >>> 16, 60_000L);
    return (int) (millisInMinute << 12 | msb & 0xFFF);
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
    if (unstoredLength + ID_BYTES > unstored.length) {
      unstored = Arrays.copyOf(unstored, Math.max(4 * ID_BYTES, unstored.length * 2));
    }
    write(unstored, unstoredLength, high, low);
    unstoredLength += ID_BYTES;
    return true;
  }

  /** Adds every id of a stored chunk ({@link #takeUnstored}), as stored already. */
  void addStored(byte[] chunk) {
    for (int at = 0; at + ID_BYTES <= chunk.length; at += ID_BYTES) {
      insert(readHigh(chunk, at), readLow(chunk, at));
    }
  }

  /** The ids added since the last call, as one chunk to store; null when there are none. */
  byte[] takeUnstored() {
    if (unstoredLength == 0) {
      return null;
    }
    byte[] chunk = Arrays.copyOf(unstored, unstoredLength);
    unstored = new byte[0];
    unstoredLength = 0;
    return chunk;
  }

  /** Whether a stored chunk holds the id. */
  static boolean chunkHolds(byte[] chunk, int high, long low) {
    for (int at = 0; at + ID_BYTES <= chunk.length; at += ID_BYTES) {
      if (readLow(chunk, at) == low && readHigh(chunk, at) == high) {
        return true;
      }
    }
    return false;
  }

  /** One id as a chunk of its own. */
  static byte[] chunkOf(int high, long low) {
    byte[] chunk = new byte[ID_BYTES];
    write(chunk, 0, high, low);
    return chunk;
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

  private static void write(byte[] to, int at, int high, long low) {
    for (int i = 0; i < 4; i++) {
      to[at + i] = (byte) (high >>> 24 - 8 * i);
    }
    for (int i = 0; i < 8; i++) {
      to[at + 4 + i] = (byte) (low >>> 56 - 8 * i);
    }
  }

  private static int readHigh(byte[] from, int at) {
    int high = 0;
    for (int i = 0; i < 4; i++) {
      high = high << 8 | from[at + i] & 0xFF;
    }
    return high;
  }

  private static long readLow(byte[] from, int at) {
    long low = 0;
    for (int i = 0; i < 8; i++) {
      low = low << 8 | from[at + 4 + i] & 0xFF;
    }
    return low;
  }
}
