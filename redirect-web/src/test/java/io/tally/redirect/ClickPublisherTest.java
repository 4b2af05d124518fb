package io.tally.redirect;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.tally.event.ClickEvent;
import java.time.Duration;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.producer.BufferExhaustedException;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

/**
 * Tests for {@link ClickPublisher}'s shedding after a full buffer, and for the producer setting that keeps
 * a quiet topic's metadata. A full buffer cannot be made on demand with a real broker inside a unit test
 * ({@code BrokerOutageITCase} does it with one), so the producer here is Kafka's own {@link MockProducer},
 * refusing like a full one.
 */
class ClickPublisherTest {

  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final FullProducer producer = new FullProducer();
  private final AtomicLong nanos = new AtomicLong(1_000_000_000L);
  private final ClickPublisher publisher = new ClickPublisher(producer, "clicks", registry, nanos::get);

  @Test
  void afterTheBufferWasFoundFullDropsWithoutAskingTheProducerForAWhile() {
    producer.full = true;
    for (int i = 0; i < 100; i++) {
      publisher.publish(click());
      nanos.addAndGet(ClickPublisher.SHED_FOR.toNanos() / 100);
    }

    assertThat(producer.attempts).as("sends tried within the shedding interval").hasValue(1);
    assertThat(dropped()).isEqualTo(100);

    producer.full = false;
    nanos.addAndGet(1);
    publisher.publish(click());

    assertThat(producer.attempts).hasValue(2);
    assertThat(registry.get("tally.click.events.sent").counter().count()).isEqualTo(1);
    assertThat(dropped()).isEqualTo(100);
  }

  @Test
  void theProducerKeepsTheTopicsMetadataThroughAQuietSpell() {
    // With Kafka's default (5 minutes) the first click after a quiet spell waits for metadata longer than
    // max.block.ms and is dropped as metadata_unavailable.
    Properties p = ClickPublisher.producerProperties("localhost:9092", 1 << 20, Duration.ofMillis(2));

    assertThat(Long.parseLong(p.get(ProducerConfig.METADATA_MAX_IDLE_CONFIG).toString()))
        .isGreaterThanOrEqualTo(Duration.ofDays(1).toMillis());
  }

  private double dropped() {
    return registry.get("tally.click.events.dropped").tag("reason", "buffer_full").counter().count();
  }

  private static ClickEvent click() {
    return ClickEvent.minimal(UUID.randomUUID(), "abc", System.currentTimeMillis(), false);
  }

  private static final class FullProducer extends MockProducer<String, byte[]> {
    volatile boolean full;
    final AtomicInteger attempts = new AtomicInteger();

    FullProducer() {
      super(true, null, new StringSerializer(), new ByteArraySerializer());
    }

    @Override
    public synchronized Future<RecordMetadata> send(ProducerRecord<String, byte[]> record, Callback callback) {
      attempts.incrementAndGet();
      if (full) {
        // As KafkaProducer does: the refusal goes to the callback, on the sending thread, before send returns.
        BufferExhaustedException refusal = new BufferExhaustedException("buffer full");
        callback.onCompletion(null, refusal);
        return CompletableFuture.failedFuture(refusal);
      }
      return super.send(record, callback);
    }
  }
}
