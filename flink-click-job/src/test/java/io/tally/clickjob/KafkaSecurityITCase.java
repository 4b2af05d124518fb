package io.tally.clickjob;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tally.clickjob.io.RewindToOpenDay;
import io.tally.counting.records.DeadLetter;
import io.tally.counting.records.RawClick;
import io.tally.embedded.EmbeddedKafkaBroker;
import io.tally.event.ClickEventCodec;
import io.tally.testing.ClickEvents;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The click job's Kafka clients on a broker that takes only SASL logins on its listener, configured
 * by the job's own flags: its source reads the click topic, its dead-letter sink writes, and the
 * start-position lookup asks; a wrong password is refused by the broker.
 */
class KafkaSecurityITCase {

  @RegisterExtension
  static final MiniClusterExtension FLINK =
      new MiniClusterExtension(
          new MiniClusterResourceConfiguration.Builder().setNumberSlotsPerTaskManager(1).build());

  @TempDir static Path dir;

  private static EmbeddedKafkaBroker broker;

  @BeforeAll
  static void startBroker() throws Exception {
    broker = EmbeddedKafkaBroker.startWithSasl(dir.resolve("kafka"), Map.of("click-job", "pw"));
    broker.createTopics(
        List.of(new NewTopic("clicks", 2, (short) 1), new NewTopic("clicks-dlq", 1, (short) 1)));
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
    p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
    p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
      for (int i = 0; i < 5; i++) {
        producer.send(
            new ProducerRecord<>(
                "clicks",
                ClickEventCodec.encode(
                    ClickEvents.minimal(
                        UUID.randomUUID(), "abc", System.currentTimeMillis(), false))));
      }
    }
  }

  @AfterAll
  static void stopBroker() {
    broker.close();
  }

  @Test
  void theSourceReadsAndTheDeadLetterSinkWritesOverSasl() throws Exception {
    ClickJobOptions options = options("pw");
    assertThat(
            RewindToOpenDay.onKafka(
                    options.connection().kafkaClientProperties(),
                    "clicks",
                    options.groupId(),
                    options.outOfOrderness(),
                    options.allowedLateness())
                .offsets())
        .as("where each partition starts, read over SASL")
        .hasSize(2);

    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    env.setParallelism(1);
    List<RawClick> read =
        env.fromSource(
                ClickCountJob.kafkaSource(options, OffsetsInitializer.earliest()),
                WatermarkStrategy.noWatermarks(),
                "clicks over SASL")
            .executeAndCollect(5);
    assertThat(read).hasSize(5);

    StreamExecutionEnvironment sink = StreamExecutionEnvironment.getExecutionEnvironment();
    sink.setParallelism(1);
    sink.fromData(DeadLetter.refusedRow("click_counts", "22001 too long", false, "{}"))
        .sinkTo(ClickCountJob.deadLetterSink(options));
    sink.execute("dead letter over SASL");
    assertThat(readPlain("clicks-dlq")).hasSize(1);
  }

  @Test
  void aWrongPasswordIsRefusedByTheBroker() {
    Properties wrong = options("not-it").connection().kafkaClientProperties();
    wrong.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
    wrong.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
    try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(wrong)) {
      assertThatThrownBy(() -> consumer.partitionsFor("clicks", Duration.ofSeconds(30)))
          .isInstanceOf(SaslAuthenticationException.class);
    }
  }

  private static ClickJobOptions options(String password) {
    return ClickJobOptions.parse(
        "--bootstrap-servers",
        broker.saslBootstrapServers(),
        "--kafka-security-protocol",
        "SASL_PLAINTEXT",
        "--kafka-sasl-mechanism",
        "PLAIN",
        "--kafka-sasl-username",
        "click-job",
        "--kafka-sasl-password",
        password,
        "--topic",
        "clicks",
        "--dlq-topic",
        "clicks-dlq");
  }

  private static List<byte[]> readPlain(String topic) {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
    p.put(ConsumerConfig.GROUP_ID_CONFIG, "reader");
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
    List<byte[]> values = new ArrayList<>();
    try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p)) {
      consumer.subscribe(List.of(topic));
      long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (values.isEmpty() && System.nanoTime() < deadline) {
        consumer.poll(Duration.ofMillis(500)).forEach(r -> values.add(r.value()));
      }
    }
    return values;
  }
}
