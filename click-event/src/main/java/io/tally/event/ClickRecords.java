package io.tally.event;

import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * The Kafka record layout of a click, the same for every producer: key = link code (one code's clicks
 * stay in one partition, in order), value = the codec's JSON, timestamp = the click's {@code ts}, so that
 * consumers get event time without parsing and a time range maps to offsets by timestamp.
 */
public final class ClickRecords {

  private ClickRecords() {}

  public static ProducerRecord<String, byte[]> of(String topic, ClickEvent event) {
    return new ProducerRecord<>(topic, null, event.ts(), event.code(), ClickEventCodec.encode(event));
  }
}
