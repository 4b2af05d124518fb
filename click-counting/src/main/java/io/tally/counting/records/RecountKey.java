package io.tally.counting.records;

/**
 * The key of a recount that sorts its clicks once: a click's link, then its visitor's day (for a
 * person's click with a visitor hash; none for the rest), then its time and id. Sorted by this key
 * (as BATCH mode sorts a keyed input, by its serialized bytes: {@code RecountKeySerializer}), a
 * link's clicks come together, each visitor's day together inside them in time order, as the
 * streaming job mostly meets them, and the copies of a click side by side: one pass serves the
 * dedup, the visitor marks and the link's periods.
 *
 * <p>The hash code is the link's alone: Flink places a key by its hash code, so every click of a
 * link goes to the subtask that counts the link, however its visitor, time and id differ. Equal
 * keys still have equal hash codes.
 *
 * @param person whether the click counts as a visitor ({@link
 *     io.tally.counting.functions.VisitorHours#counts}); the visitor and day are 0 when not
 * @param visitorHigh the visitor hash's first 64 bits
 * @param visitorLow the visitor hash's last 64 bits
 * @param day the UTC day, as days since the epoch
 * @param ts the click's own time
 */
public record RecountKey(
    String code,
    boolean person,
    long visitorHigh,
    long visitorLow,
    int day,
    long ts,
    long idHigh,
    long idLow) {

  /** Whether {@code other} is a click of the same link. */
  public boolean sameLink(RecountKey other) {
    return code.equals(other.code);
  }

  /** Whether {@code other} is a click of the same visitor on the same link and day. */
  public boolean sameVisitorDay(RecountKey other) {
    return person
        && other.person
        && visitorHigh == other.visitorHigh
        && visitorLow == other.visitorLow
        && day == other.day
        && sameLink(other);
  }

  @Override
  public int hashCode() {
    return code.hashCode();
  }
}
