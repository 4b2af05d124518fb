package io.tally.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.Future;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Three KRaft nodes in JVMs of their own: a node killed with SIGKILL under writes costs no
 * acknowledged record and copies none, and comes back into every partition's in-sync set.
 */
class KafkaBrokerClusterITCase {

  private static final String TOPIC = "replicated";

  @TempDir Path dir;

  @Test
  void aLeaderKilledUnderWritesLosesAndRepeatsNoAcknowledgedRecord() throws Exception {
    try (KafkaBrokerCluster cluster = KafkaBrokerCluster.start(dir, 3, 0)) {
      cluster.createTopics(
          List.of(new NewTopic(TOPIC, 2, (short) 3).configs(Map.of("min.insync.replicas", "2"))));
      assertThat(cluster.inSyncReplicas(TOPIC)).allSatisfy((p, isr) -> assertThat(isr).hasSize(3));

      Set<String> acknowledged = new HashSet<>();
      try (KafkaProducer<String, String> producer = producer(cluster.bootstrapServers())) {
        acknowledged.addAll(send(producer, 0, 200));
        int victim = cluster.leaderOf(TOPIC, 0);
        cluster.kill(victim);
        assertThat(cluster.running()).hasSize(2).doesNotContain(victim);
        acknowledged.addAll(send(producer, 200, 400));

        cluster.restart(victim);
        await()
            .atMost(Duration.ofSeconds(60))
            .untilAsserted(
                () ->
                    assertThat(cluster.inSyncReplicas(TOPIC))
                        .allSatisfy((p, isr) -> assertThat(isr).containsExactly(1, 2, 3)));
        acknowledged.addAll(send(producer, 400, 500));
      }

      List<String> read = readAll(cluster.bootstrapServers(), acknowledged.size());
      assertThat(read).hasSize(500).doesNotHaveDuplicates();
      assertThat(new HashSet<>(read)).isEqualTo(acknowledged);
    }
  }

  private static List<String> send(KafkaProducer<String, String> producer, int from, int to)
      throws Exception {
    List<Future<RecordMetadata>> sent = new ArrayList<>();
    List<String> values = new ArrayList<>();
    for (int i = from; i < to; i++) {
      String value = "record-" + i;
      sent.add(producer.send(new ProducerRecord<>(TOPIC, String.valueOf(i), value)));
      values.add(value);
    }
    for (Future<RecordMetadata> ack : sent) {
      ack.get();
    }
    return values;
  }

  private static KafkaProducer<String, String> producer(String bootstrap) {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 120_000);
    p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
    p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
    return new KafkaProducer<>(p);
  }

  private static List<String> readAll(String bootstrap, int atLeast) {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ConsumerConfig.GROUP_ID_CONFIG, "reader");
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
    List<String> read = new ArrayList<>();
    try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(p)) {
      consumer.subscribe(List.of(TOPIC));
      long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
      while (System.nanoTime() < deadline) {
        for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(500))) {
          read.add(r.value());
        }
        if (read.size() >= atLeast) {
          // One more poll, for any copy behind the last expected record.
          consumer.poll(Duration.ofSeconds(1)).forEach(r -> read.add(r.value()));
          break;
        }
      }
    }
    return read;
  }
}
