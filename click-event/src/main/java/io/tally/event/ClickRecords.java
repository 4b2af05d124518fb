package io.tally.event;

import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * The Kafka record layout of a click, the same for every producer: no key, value = the codec's
 * JSON, timestamp = the click's {@code ts}, so that consumers get event time without parsing and a
 * time range maps to offsets by timestamp.
 *
 * <p>Without a key the producer's default partitioner fills one partition's batch at a time and
 * moves on, so a viral link's clicks spread over every partition instead of loading one
 * (docs/adr/ADR-005). No consumer may rely on one link's clicks sharing a partition or arriving in
 * order; the code is in the value. Records written by earlier versions, keyed by code, are read the
 * same way.
 */
public final class ClickRecords {

  private ClickRecords() {}

  /** The record of {@code event}, for the producer's partitioner to place. */
  public static ProducerRecord<String, byte[]> of(String topic, ClickEvent event) {
    return new ProducerRecord<>(topic, null, event.ts(), null, ClickEventCodec.encode(event));
  }
}
