package io.tally.counting.records;

import java.nio.charset.StandardCharsets;

/**
 * A record the job could not count, or a row PostgreSQL refused to store, on its way to the
 * dead-letter topic.
 *
 * @param reason why: a {@link io.tally.event.MalformedReason#label()}, {@link #LATE} or {@link
 *     #REFUSED_ROW}
 * @param detail a human-readable explanation
 * @param topic source topic; for a refused row, the table that refused it
 * @param partition source partition, or -1 for a refused row
 * @param offset source offset, or -1 when no longer known (late clicks, refused rows)
 * @param raw the source record's bytes, kept as they were (an oversized record's first bytes only);
 *     for a refused row, the row as JSON
 */
public record DeadLetter(
    String reason, String detail, String topic, int partition, long offset, byte[] raw) {

  public static final String LATE = "late";

  /** A row of the read side that PostgreSQL refused as data. */
  public static final String REFUSED_ROW = "refused_row";

  /**
   * A row {@code table} refused, with PostgreSQL's {@code reason}; {@code stoodIn} says whether its
   * clicks are counted under a stand-in row instead.
   */
  public static DeadLetter refusedRow(String table, String reason, boolean stoodIn, String row) {
    return new DeadLetter(
        REFUSED_ROW,
        reason + (stoodIn ? "; its clicks are counted under (other)" : "; set aside"),
        table,
        -1,
        -1,
        row.getBytes(StandardCharsets.UTF_8));
  }

  /** Whether this letter is a refused row rather than a record of the click topic. */
  public boolean isRefusedRow() {
    return REFUSED_ROW.equals(reason);
  }
}
