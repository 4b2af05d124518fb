package io.tally.redirect;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.tally.event.ClickEvent;
import io.tally.testing.ClickEvents;
import io.tally.testing.KafkaExtension;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerInterceptor;
import org.apache.kafka.clients.producer.ProducerOnAMovableClock;
import org.apache.kafka.clients.producer.ProducerOnAMovableClock.MovableTime;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Tests for {@link ClickPublisher} on a real producer and a real broker, for what only they show: a
 * quiet topic's metadata kept, a start while Kafka is down, a close with clicks still buffered, and
 * a popular link's clicks spread over the partitions. The producer is built from {@link
 * ClickPublisher#producerProperties} as redirect-web builds it.
 */
class ClickPublisherITCase {

  @RegisterExtension static final KafkaExtension KAFKA = new KafkaExtension();

  /**
   * Longer than Kafka's default metadata.max.idle.ms (5 minutes) and its metadata.max.age.ms (5
   * minutes).
   */
  private static final Duration QUIET_SPELL = Duration.ofMinutes(6);

  private static final Duration DELIVERY_TIMEOUT = RedirectWebConfig.DEFAULT_KAFKA_DELIVERY_TIMEOUT;

  /** Extra producer setting that hands {@link CountingInterceptor} its counter. */
  private static final String SEND_COUNTER = "tally.test.send.counter";

  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

  @Test
  void theFirstClickAfterAQuietSpellFindsTheTopicsMetadataAndIsDelivered() {
    String topic = KAFKA.newTopic("clicks-quiet", 1);
    // max.block.ms 0: a click finds the topic's partitions already known or is dropped, however
    // fast the broker.
    Properties props =
        ClickPublisher.producerProperties(
            KAFKA.bootstrapServers(), 1 << 20, Duration.ZERO, DELIVERY_TIMEOUT);
    MovableTime time = new MovableTime();
    KafkaProducer<String, byte[]> producer = ProducerOnAMovableClock.create(props, time);
    try (ClickPublisher publisher = new ClickPublisher(producer, topic, registry)) {
      publisher.warmUp(Duration.ofSeconds(30));
      publisher.publish(click());
      await("first click acknowledged")
          .atMost(Duration.ofSeconds(30))
          .untilAsserted(() -> assertThat(counter("acknowledged")).isEqualTo(1));

      time.advance(QUIET_SPELL);
      // Wakes the producer's I/O thread, which finds its metadata too old and refreshes it, keeping
      // or forgetting the idle topic; flush does not touch the topic itself, as a click or warm-up
      // would.
      producer.flush();
      await("metadata refreshed after the quiet spell")
          .atMost(Duration.ofSeconds(30))
          .untilAsserted(() -> assertThat(metadataAgeSeconds(producer)).isLessThan(60));

      publisher.publish(click());

      assertThat(dropped()).as("clicks dropped after the quiet spell").isZero();
      await("click after the quiet spell acknowledged")
          .atMost(Duration.ofSeconds(30))
          .untilAsserted(() -> assertThat(counter("acknowledged")).isEqualTo(2));
    }
  }

  @Test
  void kafkaDownAtTheStartCostsOneProducerCallPerSheddingIntervalAndSendingResumesWhenItIsUp() {
    String topic = KAFKA.newTopic("clicks-late-kafka", 1);
    AtomicInteger sendCalls = new AtomicInteger();
    Properties props =
        ClickPublisher.producerProperties(
            KAFKA.bootstrapServers(), 1 << 20, Duration.ofMillis(2), DELIVERY_TIMEOUT);
    props.put(ProducerConfig.INTERCEPTOR_CLASSES_CONFIG, CountingInterceptor.class.getName());
    props.put(SEND_COUNTER, sendCalls);
    // The shedding interval is read from this clock, so that it passes exactly as the test says.
    AtomicLong nanos = new AtomicLong();
    KAFKA.broker().stop();
    try (ClickPublisher publisher =
        new ClickPublisher(new KafkaProducer<>(props), topic, registry, nanos::get)) {
      try {
        for (int i = 0; i < 1_000; i++) {
          publisher.publish(click());
          nanos.addAndGet(ClickPublisher.SHED_FOR.toNanos() / 100);
        }

        assertThat(dropped("metadata_unavailable")).isEqualTo(1_000);
        assertThat(sendCalls)
            .as("sends that reached the producer, each waiting max.block.ms")
            .hasValue(10);
      } finally {
        KAFKA.broker().restart();
      }

      // No restart of the publisher: a click after each shedding interval asks the producer again.
      await("a click acknowledged after Kafka came up")
          .atMost(Duration.ofSeconds(60))
          .pollInterval(Duration.ofMillis(100))
          .untilAsserted(
              () -> {
                nanos.addAndGet(ClickPublisher.SHED_FOR.toNanos());
                publisher.publish(click());
                assertThat(counter("acknowledged")).isPositive();
              });
      await("every click acknowledged or dropped")
          .atMost(Duration.ofSeconds(30))
          .untilAsserted(
              () -> assertThat(counter("sent")).isEqualTo(counter("acknowledged") + dropped()));
      assertThat(dropped())
          .as("only for missing metadata")
          .isEqualTo(dropped("metadata_unavailable"));
    }
  }

  @Test
  void clicksStillBufferedWhenThePublisherClosesAreCountedAsDroppedClosed() {
    String topic = KAFKA.newTopic("clicks-close", 1);
    Properties props =
        ClickPublisher.producerProperties(
            KAFKA.bootstrapServers(), 1 << 20, Duration.ofMillis(2), DELIVERY_TIMEOUT);
    ClickPublisher publisher = new ClickPublisher(new KafkaProducer<>(props), topic, registry);
    try {
      publisher.warmUp(Duration.ofSeconds(30));
      KAFKA.broker().stop();
      for (int i = 0; i < 5; i++) {
        publisher.publish(click());
      }
      assertThat(dropped())
          .as("clicks refused: the producer keeps the metadata through the outage")
          .isZero();

      publisher.close();

      assertThat(dropped("closed")).isEqualTo(5);
      assertThat(counter("sent")).isEqualTo(counter("acknowledged") + dropped()).isEqualTo(5);
    } finally {
      // The broker is shared by every test class in this JVM: it comes back whatever happens here.
      KAFKA.broker().restart();
      publisher.close();
    }
  }

  @Test
  void aPopularLinksClicksSpreadOverEveryPartition() {
    String topic = KAFKA.newTopic("clicks-viral", 4);
    Properties props =
        ClickPublisher.producerProperties(
            KAFKA.bootstrapServers(), 32 << 20, Duration.ofSeconds(10), DELIVERY_TIMEOUT);
    // Enough for dozens of partition switches: the producer moves on after a batch's worth of bytes
    // (64 KiB).
    int clicks = 20_000;
    try (ClickPublisher publisher =
        new ClickPublisher(new KafkaProducer<>(props), topic, registry)) {
      publisher.warmUp(Duration.ofSeconds(30));
      for (int i = 0; i < clicks; i++) {
        publisher.publish(click());
      }
      await("every click acknowledged")
          .atMost(Duration.ofSeconds(60))
          .untilAsserted(() -> assertThat(counter("acknowledged")).isEqualTo(clicks));
    }

    try (ClickTopicReader reader = new ClickTopicReader(KAFKA.bootstrapServers(), topic)) {
      List<Long> perPartition = reader.recordsPerPartition();
      assertThat(perPartition).hasSize(4).allMatch(n -> n > 0);
      assertThat(perPartition.stream().mapToLong(Long::longValue).max().orElseThrow())
          .as("the busiest partition's clicks, of %d: %s", clicks, perPartition)
          .isLessThan(clicks / 2);
    }
  }

  private double counter(String name) {
    return registry.get("tally.click.events." + name).counter().count();
  }

  private double dropped(String reason) {
    return registry.get("tally.click.events.dropped").tag("reason", reason).counter().count();
  }

  private double dropped() {
    return registry.find("tally.click.events.dropped").counters().stream()
        .mapToDouble(Counter::count)
        .sum();
  }

  private static double metadataAgeSeconds(KafkaProducer<?, ?> producer) {
    return producer.metrics().entrySet().stream()
        .filter(
            e ->
                e.getKey().name().equals("metadata-age")
                    && e.getKey().group().equals("producer-metrics"))
        .mapToDouble(e -> ((Number) e.getValue().metricValue()).doubleValue())
        .findFirst()
        .orElseThrow();
  }

  private static ClickEvent click() {
    return ClickEvents.minimal(UUID.randomUUID(), "abc", System.currentTimeMillis(), false);
  }

  /** Counts the producer's send calls, each of which may wait up to max.block.ms. */
  public static final class CountingInterceptor implements ProducerInterceptor<String, byte[]> {
    private AtomicInteger calls;

    @Override
    public void configure(Map<String, ?> configs) {
      calls = (AtomicInteger) configs.get(SEND_COUNTER);
    }

    @Override
    public ProducerRecord<String, byte[]> onSend(ProducerRecord<String, byte[]> record) {
      calls.incrementAndGet();
      return record;
    }

    @Override
    public void onAcknowledgement(RecordMetadata metadata, Exception exception) {}

    @Override
    public void close() {}
  }
}
