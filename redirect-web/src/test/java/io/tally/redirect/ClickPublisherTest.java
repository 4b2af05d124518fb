package io.tally.redirect;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.tally.event.ClickEvent;
import io.tally.testing.ClickEvents;
import java.time.Duration;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.apache.kafka.clients.producer.BufferExhaustedException;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

/**
 * Tests for {@link ClickPublisher}'s shedding after a refusal and its accounting of every event. A
 * full buffer or a lost acknowledgement cannot be made on demand with a real broker inside a unit
 * test ({@code BrokerOutageITCase} and {@code ClickPublisherITCase} do it with one), so the
 * producer here is Kafka's own {@link MockProducer}, refusing or failing like a real one.
 */
class ClickPublisherTest {

  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final RefusingProducer producer = new RefusingProducer();
  private final AtomicLong nanos = new AtomicLong(1_000_000_000L);
  private final ClickPublisher publisher =
      new ClickPublisher(producer, "clicks", registry, nanos::get);

  @Test
  void producerWaitsTwentyMillisecondsToFillABatchWithoutLoweringDelivery() {
    Properties p =
        ClickPublisher.producerProperties(
            "localhost:9092", 8 << 20, Duration.ofMillis(2), Duration.ofMinutes(10));

    assertThat(p)
        .containsEntry(ProducerConfig.LINGER_MS_CONFIG, 20)
        .containsEntry(ProducerConfig.ACKS_CONFIG, "all")
        .containsEntry(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true)
        .containsEntry(ProducerConfig.MAX_BLOCK_MS_CONFIG, 2L);
    // The producer refuses a delivery timeout below linger.ms + request.timeout.ms; the shortest
    // allowed one fits.
    Properties shortest =
        ClickPublisher.producerProperties(
            "localhost:9092", 8 << 20, Duration.ofMillis(2), Duration.ofSeconds(1));
    assertThat((int) shortest.get(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG) + 20)
        .isLessThanOrEqualTo(1000);
  }

  @Test
  void afterTheBufferWasFoundFullDropsWithoutAskingTheProducerForAWhile() {
    producer.refusal = () -> new BufferExhaustedException("buffer full");
    for (int i = 0; i < 100; i++) {
      publisher.publish(click());
      nanos.addAndGet(ClickPublisher.SHED_FOR.toNanos() / 100);
    }

    assertThat(producer.attempts).as("sends tried within the shedding interval").hasValue(1);
    assertThat(dropped("buffer_full")).isEqualTo(100);

    producer.refusal = null;
    nanos.addAndGet(1);
    publisher.publish(click());

    assertThat(producer.attempts).hasValue(2);
    assertThat(counter("sent")).isEqualTo(101);
    assertThat(counter("acknowledged")).isEqualTo(1);
    assertThat(dropped("buffer_full")).isEqualTo(100);
  }

  @Test
  void afterMetadataWasFoundMissingDropsWithoutAskingTheProducerForAWhile() {
    // What KafkaProducer does when the topic's partitions are unknown after max.block.ms (Kafka
    // down at start).
    producer.refusal =
        () -> new TimeoutException("Topic clicks not present in metadata after 2 ms.");
    for (int i = 0; i < 1_000; i++) {
      publisher.publish(click());
      nanos.addAndGet(ClickPublisher.SHED_FOR.toNanos() / 100);
    }

    assertThat(producer.attempts).as("sends tried over ten shedding intervals").hasValue(10);
    assertThat(dropped("metadata_unavailable")).isEqualTo(1_000);
    assertThat(dropped("buffer_full")).isZero();

    producer.refusal = null;
    nanos.addAndGet(ClickPublisher.SHED_FOR.toNanos());
    publisher.publish(click());

    assertThat(counter("acknowledged")).as("sending resumed by itself").isEqualTo(1);
    assertThat(counter("sent"))
        .isEqualTo(counter("acknowledged") + totalDropped())
        .isEqualTo(1_001);
  }

  @Test
  void countsEveryEventLostAfterTheBufferTookItAsDroppedWithItsReason() throws Exception {
    MockProducer<String, byte[]> buffering =
        new MockProducer<>(false, null, new StringSerializer(), new ByteArraySerializer());
    ClickPublisher buffered = new ClickPublisher(buffering, "clicks", registry, nanos::get);
    for (int i = 0; i < 4; i++) {
      buffered.publish(click());
    }

    // Later outcomes arrive on the producer's I/O thread, never on the thread that sent.
    onIoThread(buffering::completeNext);
    onIoThread(
        () ->
            buffering.errorNext(
                new TimeoutException("Expiring 1 record(s): 600000 ms has passed")));
    onIoThread(() -> buffering.errorNext(new RecordTooLargeException("too large")));
    assertThat(counter("sent"))
        .as("one still in flight")
        .isEqualTo(counter("acknowledged") + totalDropped() + 1);

    onIoThread(
        () ->
            buffering.errorNext(
                new TimeoutException("Expiring 1 record(s): 600000 ms has passed")));

    assertThat(counter("acknowledged")).isEqualTo(1);
    assertThat(dropped("delivery_timeout")).isEqualTo(2);
    assertThat(dropped("send_failed")).isEqualTo(1);
    assertThat(counter("sent")).isEqualTo(counter("acknowledged") + totalDropped());

    buffered.publish(click());
    assertThat(buffering.history()).as("no shedding after losses from the buffer").hasSize(5);
  }

  @Test
  void registersEveryDropReasonBeforeTheFirstDrop() {
    assertThat(registry.find("tally.click.events.dropped").counters())
        .extracting(c -> c.getId().getTag("reason"))
        .containsExactlyInAnyOrder(
            "buffer_full",
            "metadata_unavailable",
            "rejected",
            "delivery_timeout",
            "closed",
            "send_failed",
            "invalid");
  }

  @Test
  void countsAClickWhoseEventCannotBeMadeAsDroppedWithoutThrowing() {
    ClickSink.Click unmakeable =
        answered(
            () -> {
              throw new IllegalArgumentException("referrer_domain is not a host name");
            });

    assertThatCode(() -> publisher.accept(unmakeable)).doesNotThrowAnyException();
    publisher.accept(answered(ClickPublisherTest::click));

    assertThat(producer.attempts).as("only the made event is sent").hasValue(1);
    assertThat(dropped("invalid")).isEqualTo(1);
    assertThat(counter("sent")).isEqualTo(2);
    assertThat(counter("sent")).isEqualTo(counter("acknowledged") + totalDropped());
  }

  private double counter(String name) {
    return registry.get("tally.click.events." + name).counter().count();
  }

  private double dropped(String reason) {
    return registry.get("tally.click.events.dropped").tag("reason", reason).counter().count();
  }

  private double totalDropped() {
    return registry.find("tally.click.events.dropped").counters().stream()
        .mapToDouble(Counter::count)
        .sum();
  }

  private static void onIoThread(Runnable outcome) throws Exception {
    Thread io = new Thread(outcome, "kafka-producer-network-thread | test");
    io.start();
    io.join();
  }

  /** A redirect's click whose event is made by {@code event}, as the app makes it on demand. */
  private static ClickSink.Click answered(Supplier<ClickEvent> event) {
    return new ClickSink.Click() {
      @Override
      public String code() {
        return "abc";
      }

      @Override
      public ClickEvent event() {
        return event.get();
      }
    };
  }

  private static ClickEvent click() {
    return ClickEvents.minimal(UUID.randomUUID(), "abc", System.currentTimeMillis(), false);
  }

  /**
   * A {@link MockProducer} that refuses sends on the sending thread, as KafkaProducer does, while
   * told to.
   */
  private static final class RefusingProducer extends MockProducer<String, byte[]> {
    volatile Supplier<RuntimeException> refusal;
    final AtomicInteger attempts = new AtomicInteger();

    RefusingProducer() {
      super(true, null, new StringSerializer(), new ByteArraySerializer());
    }

    @Override
    public synchronized Future<RecordMetadata> send(
        ProducerRecord<String, byte[]> record, Callback callback) {
      attempts.incrementAndGet();
      Supplier<RuntimeException> refuse = refusal;
      if (refuse != null) {
        // As KafkaProducer does: the refusal goes to the callback, on the sending thread, before
        // send returns.
        RuntimeException e = refuse.get();
        callback.onCompletion(null, (Exception) e);
        return CompletableFuture.failedFuture(e);
      }
      return super.send(record, callback);
    }
  }
}
