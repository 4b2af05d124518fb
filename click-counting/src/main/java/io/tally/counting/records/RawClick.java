package io.tally.counting.records;

/**
 * A record as read from the click topic, before parsing: its bytes and where it came from, so that
 * a dead letter can point back at the exact offset.
 */
public record RawClick(
    String topic, int partition, long offset, long kafkaTimestamp, byte[] value) {}
