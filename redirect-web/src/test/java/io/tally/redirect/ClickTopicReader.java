package io.tally.redirect;

import io.tally.event.ClickEventCodec;
import io.tally.event.Decoded;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;

/** Reads a click topic from its beginning, as any consumer would, without joining a group. */
final class ClickTopicReader implements AutoCloseable {

  private final KafkaConsumer<String, byte[]> consumer;
  private final List<TopicPartition> partitions;
  private final List<ConsumerRecord<String, byte[]>> seen = new ArrayList<>();

  ClickTopicReader(String bootstrapServers, String topic) {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
    consumer = new KafkaConsumer<>(p);
    partitions =
        consumer.partitionsFor(topic, Duration.ofSeconds(30)).stream()
            .map(info -> new TopicPartition(topic, info.partition()))
            .toList();
    consumer.assign(partitions);
    consumer.seekToBeginning(partitions);
  }

  /**
   * Polls until the topic has given {@code count} click records of link {@code code} (read from the
   * value: records have no key), and returns them; fails after {@code timeout}.
   */
  List<ConsumerRecord<String, byte[]>> awaitRecords(String code, int count, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      List<ConsumerRecord<String, byte[]>> matching =
          seen.stream().filter(r -> code.equals(codeOf(r))).toList();
      if (matching.size() >= count) {
        return matching;
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError(
            "expected "
                + count
                + " records of "
                + code
                + " within "
                + timeout
                + ", got "
                + matching.size());
      }
      consumer.poll(Duration.ofMillis(200)).forEach(seen::add);
    }
  }

  private static String codeOf(ConsumerRecord<String, byte[]> record) {
    return ClickEventCodec.decode(record.value(), System.currentTimeMillis())
            instanceof Decoded.Valid valid
        ? valid.event().code()
        : null;
  }

  /**
   * How many records the topic holds: the sum of its partitions' end offsets (no compaction, no
   * transactions).
   */
  long recordCount() {
    return recordsPerPartition().stream().mapToLong(Long::longValue).sum();
  }

  /** How many records each partition holds, by partition number: its end offset. */
  List<Long> recordsPerPartition() {
    Map<TopicPartition, Long> ends = consumer.endOffsets(partitions, Duration.ofSeconds(30));
    return partitions.stream()
        .sorted(Comparator.comparingInt(TopicPartition::partition))
        .map(ends::get)
        .toList();
  }

  @Override
  public void close() {
    consumer.close();
  }
}
