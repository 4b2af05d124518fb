package io.tally.counting.records;

/**
 * A visitor's day on a link: the key of the visitor marks, one entry each. The visitor hash is held
 * as its 128 bits rather than its 22 characters, and the day is part of the key, so that an entry
 * is a key and one word of hour bits.
 *
 * <p>The hash code is written out, not left to the record: Flink places a key by its hash code, so
 * it must be the same on every TaskManager whatever its JDK.
 *
 * @param code the link code
 * @param visitorHigh the visitor hash's first 64 bits
 * @param visitorLow the visitor hash's last 64 bits
 * @param day the UTC day, as days since the epoch
 */
public record VisitorDay(String code, long visitorHigh, long visitorLow, int day) {

  /**
   * The key of a person's click with a visitor hash, which is 128 bits in 22 base64url characters,
   * as parsing ensures, on the UTC day {@code day} (days since the epoch).
   */
  public static VisitorDay of(Click click, int day) {
    // Read straight into two longs: every person's click is keyed so up to three times on its way.
    String hash = click.visitor();
    if (hash.length() != 22) {
      throw new IllegalArgumentException("a visitor hash is 128 bits in 22 characters");
    }
    long high = 0;
    for (int i = 0; i < 10; i++) {
      high = high << 6 | sextet(hash, i);
    }
    int straddling = sextet(hash, 10);
    high = high << 4 | straddling >>> 2;
    long low = straddling & 0b11;
    for (int i = 11; i < 21; i++) {
      low = low << 6 | sextet(hash, i);
    }
    int last = sextet(hash, 21);
    if ((last & 0b1111) != 0) {
      throw new IllegalArgumentException("a visitor hash is 128 bits: its last 4 bits are zero");
    }
    low = low << 2 | last >>> 4;
    return new VisitorDay(click.code(), high, low, day);
  }

  /** The 6 bits base64url character {@code at} of {@code text} stands for. */
  private static int sextet(String text, int at) {
    char c = text.charAt(at);
    if (c >= 'A' && c <= 'Z') {
      return c - 'A';
    }
    if (c >= 'a' && c <= 'z') {
      return c - 'a' + 26;
    }
    if (c >= '0' && c <= '9') {
      return c - '0' + 52;
    }
    if (c == '-') {
      return 62;
    }
    if (c == '_') {
      return 63;
    }
    throw new IllegalArgumentException("not a base64url character: " + c);
  }

  @Override
  public int hashCode() {
    int h = code.hashCode();
    h = 31 * h + Long.hashCode(visitorHigh);
    h = 31 * h + Long.hashCode(visitorLow);
    return 31 * h + day;
  }
}
