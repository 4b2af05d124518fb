package io.tally.clickjob.records;

/**
 * A record the job could not count, on its way to the dead-letter topic.
 *
 * @param reason why: a {@link io.tally.event.MalformedReason#label()} or {@code late}
 * @param detail a human-readable explanation
 * @param topic source topic
 * @param partition source partition
 * @param offset source offset, or -1 when no longer known (late clicks)
 * @param raw the source record's bytes, kept as they were (an oversized record's first bytes only)
 */
public record DeadLetter(
    String reason, String detail, String topic, int partition, long offset, byte[] raw) {

  public static final String LATE = "late";
}
