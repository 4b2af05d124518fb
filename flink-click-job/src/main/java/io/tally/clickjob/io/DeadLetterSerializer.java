package io.tally.clickjob.io;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import io.tally.counting.records.DeadLetter;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import org.apache.flink.connector.kafka.sink.KafkaRecordSerializationSchema;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * Writes a dead letter as JSON to the dead-letter topic, keyed by its reason: {@code
 * {"reason","detail","source_topic","source_partition","source_offset","raw_base64"}}. The raw
 * bytes are base64 so that any record, valid UTF-8 or not, survives intact. A row PostgreSQL
 * refused is {@code {"reason":"refused_row","detail","table","row":{…}}}, the row as an object.
 */
public class DeadLetterSerializer implements KafkaRecordSerializationSchema<DeadLetter> {

  private static final JsonFactory JSON = new JsonFactory();
  private final String topic;

  public DeadLetterSerializer(String topic) {
    this.topic = topic;
  }

  @Override
  public ProducerRecord<byte[], byte[]> serialize(
      DeadLetter letter, KafkaSinkContext context, Long timestamp) {
    return new ProducerRecord<>(
        topic, letter.reason().getBytes(StandardCharsets.UTF_8), encode(letter));
  }

  static byte[] encode(DeadLetter letter) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(512);
    try (JsonGenerator gen = JSON.createGenerator(out, JsonEncoding.UTF8)) {
      gen.writeStartObject();
      gen.writeStringField("reason", letter.reason());
      gen.writeStringField("detail", letter.detail());
      if (letter.isRefusedRow()) {
        gen.writeStringField("table", letter.topic());
        gen.writeFieldName("row");
        gen.writeRawValue(new String(letter.raw(), StandardCharsets.UTF_8));
      } else {
        gen.writeStringField("source_topic", letter.topic());
        gen.writeNumberField("source_partition", letter.partition());
        gen.writeNumberField("source_offset", letter.offset());
        gen.writeStringField(
            "raw_base64",
            letter.raw() == null ? null : Base64.getEncoder().encodeToString(letter.raw()));
      }
      gen.writeEndObject();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out.toByteArray();
  }
}
