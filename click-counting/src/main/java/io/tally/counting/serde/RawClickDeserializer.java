package io.tally.counting.serde;

import io.tally.counting.records.RawClick;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.connector.kafka.source.reader.deserializer.KafkaRecordDeserializationSchema;
import org.apache.flink.util.Collector;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * Keeps each Kafka record's bytes and coordinates as they are. Parsing happens in the graph, where
 * a bad record can be routed to the dead letters; a deserializer that threw would fail the whole
 * job.
 */
public class RawClickDeserializer implements KafkaRecordDeserializationSchema<RawClick> {

  @Override
  public void deserialize(ConsumerRecord<byte[], byte[]> record, Collector<RawClick> out) {
    out.collect(
        new RawClick(
            record.topic(),
            record.partition(),
            record.offset(),
            record.timestamp(),
            record.value()));
  }

  @Override
  public TypeInformation<RawClick> getProducedType() {
    return TypeInformation.of(RawClick.class);
  }
}
