package io.tally.bench.uniques;

/**
 * An exact set of 64-bit keys, open addressing on a primitive array. The ground truth of a trial
 * holds millions of keys; boxed in a {@code HashSet<Long>}, adding them took many times as long as
 * updating the sketches being checked, and the default run no longer fitted in a minute.
 */
final class LongSet {

  private long[] slots;
  private int size;
  private boolean hasZero;

  LongSet(int expected) {
    slots = new long[Integer.highestOneBit(Math.max(4, expected) * 2 - 1) << 1];
  }

  /** Adds the key; false when it was already there. */
  boolean add(long key) {
    if (key == 0) {
      // Zero marks a free slot, so the key zero is kept aside.
      if (hasZero) {
        return false;
      }
      hasZero = true;
      return true;
    }
    int mask = slots.length - 1;
    int i = spread(key) & mask;
    while (slots[i] != 0) {
      if (slots[i] == key) {
        return false;
      }
      i = (i + 1) & mask;
    }
    slots[i] = key;
    size++;
    if (size * 2 > slots.length) {
      grow();
    }
    return true;
  }

  int size() {
    return size + (hasZero ? 1 : 0);
  }

  private void grow() {
    long[] old = slots;
    slots = new long[old.length * 2];
    int mask = slots.length - 1;
    for (long key : old) {
      if (key != 0) {
        int i = spread(key) & mask;
        while (slots[i] != 0) {
          i = (i + 1) & mask;
        }
        slots[i] = key;
      }
    }
  }

  /** Mixes the bits so that keys differing only in high bits still spread over the slots. */
  private static int spread(long key) {
    long h = key * 0x9E3779B97F4A7C15L;
    return (int) (h ^ (h >>> 32));
  }
}
