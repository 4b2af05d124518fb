package io.tally.testing;

import io.tally.embedded.EmbeddedKafkaBroker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Gives a test class a real Kafka broker (KRaft, in-process). One broker serves the whole test JVM;
 * each test takes fresh topics from {@link #newTopic(String, int)} so tests never see each other's
 * records.
 *
 * <pre>{@code
 * @RegisterExtension static final KafkaExtension KAFKA = new KafkaExtension();
 * String topic = KAFKA.newTopic("clicks", 2);
 * }</pre>
 */
public final class KafkaExtension implements BeforeAllCallback {

  private static final AtomicInteger TOPICS = new AtomicInteger();
  private EmbeddedKafkaBroker broker;

  @Override
  public void beforeAll(ExtensionContext context) {
    broker =
        context
            .getRoot()
            .getStore(ExtensionContext.Namespace.GLOBAL)
            .getOrComputeIfAbsent(
                EmbeddedKafkaBroker.class,
                key ->
                    new CloseableBroker(
                        EmbeddedKafkaBroker.start(TestDirectories.fresh("kafka"), 0)),
                CloseableBroker.class)
            .broker();
  }

  public EmbeddedKafkaBroker broker() {
    return broker;
  }

  public String bootstrapServers() {
    return broker.bootstrapServers();
  }

  /**
   * A producer of click records ({@code String} keys, byte values, {@code acks=all}) to this
   * broker, with {@code settings} on top; the caller closes it.
   */
  public KafkaProducer<String, byte[]> producer(Map<String, Object> settings) {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
    p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
    p.putAll(settings);
    return new KafkaProducer<>(p);
  }

  /** A producer of click records with the defaults of {@link #producer(Map)}. */
  public KafkaProducer<String, byte[]> producer() {
    return producer(Map.of());
  }

  /** Creates a topic with a unique name that starts with {@code prefix} and returns that name. */
  public String newTopic(String prefix, int partitions) {
    String name =
        prefix
            + "-"
            + TOPICS.incrementAndGet()
            + "-"
            + UUID.randomUUID().toString().substring(0, 8);
    broker.createTopics(List.of(new NewTopic(name, partitions, (short) 1).configs(Map.of())));
    return name;
  }

  /** The values of every record a one-partition topic holds now: read up to its end offset. */
  public List<byte[]> values(String topic) {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
    List<byte[]> values = new ArrayList<>();
    try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p)) {
      TopicPartition partition = new TopicPartition(topic, 0);
      consumer.assign(List.of(partition));
      consumer.seekToBeginning(List.of(partition));
      long end = consumer.endOffsets(List.of(partition)).get(partition);
      while (consumer.position(partition) < end) {
        for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(300))) {
          values.add(r.value());
        }
      }
    }
    return values;
  }

  /**
   * Waits until consumer group {@code groupId} has committed the end every partition of {@code
   * topic} has now: for a Flink job, that a completed checkpoint holds all of it.
   *
   * @throws IllegalStateException when {@code timeout} passes first
   */
  public void awaitCommittedToTheEnd(String topic, String groupId, Duration timeout)
      throws Exception {
    try (Admin admin =
        Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers()))) {
      Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
      for (TopicPartitionInfo partition :
          admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic).partitions()) {
        latest.put(new TopicPartition(topic, partition.partition()), OffsetSpec.latest());
      }
      Map<TopicPartition, Long> ends = new HashMap<>();
      admin.listOffsets(latest).all().get().forEach((tp, info) -> ends.put(tp, info.offset()));
      long deadline = System.nanoTime() + timeout.toNanos();
      while (true) {
        Map<TopicPartition, Long> committed = new HashMap<>();
        admin
            .listConsumerGroupOffsets(groupId)
            .partitionsToOffsetAndMetadata()
            .get()
            .forEach((tp, offset) -> committed.put(tp, offset == null ? -1 : offset.offset()));
        if (ends.entrySet().stream()
            .allMatch(
                end -> end.getValue() == 0 || end.getValue().equals(committed.get(end.getKey())))) {
          return;
        }
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException(
              groupId + " committed " + committed + " of " + topic + ", not its ends " + ends);
        }
        Thread.sleep(250);
      }
    }
  }

  private record CloseableBroker(EmbeddedKafkaBroker broker)
      implements ExtensionContext.Store.CloseableResource {
    @Override
    public void close() {
      broker.close();
    }
  }
}
