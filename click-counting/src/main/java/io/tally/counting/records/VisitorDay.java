package io.tally.counting.records;

import java.nio.ByteBuffer;
import java.util.Base64;

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
    ByteBuffer bits = ByteBuffer.wrap(Base64.getUrlDecoder().decode(click.visitor()));
    if (bits.remaining() != 16) {
      throw new IllegalArgumentException("a visitor hash is 128 bits");
    }
    return new VisitorDay(click.code(), bits.getLong(), bits.getLong(), day);
  }

  @Override
  public int hashCode() {
    int h = code.hashCode();
    h = 31 * h + Long.hashCode(visitorHigh);
    h = 31 * h + Long.hashCode(visitorLow);
    return 31 * h + day;
  }
}
