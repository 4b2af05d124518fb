package io.tally.redirect;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.tally.event.ClickEvent;
import io.tally.event.ClickRecords;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.producer.BufferExhaustedException;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Fires click events at Kafka without ever making a redirect wait.
 *
 * <p>{@link #publish} hands the event to the producer's bounded buffer and returns. The producer waits at
 * most {@code max.block.ms} (a couple of milliseconds) for room or metadata; when Kafka is slow or down
 * the buffer fills and further events are dropped, each drop counted with its reason. Once the buffer has
 * been found full, events are dropped without asking the producer for {@link #SHED_FOR}: otherwise every
 * redirect of an outage would wait out {@code max.block.ms} (measured in {@code bench broker-down}: 0.61×
 * the throughput before the outage). Sending resumes by itself when the broker is back, and the dropped
 * clicks are the price of a redirect that never fails.
 */
public final class ClickPublisher implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(ClickPublisher.class);

  /** How long events are dropped at once after the producer reported its buffer full. */
  static final Duration SHED_FOR = Duration.ofMillis(50);

  /** How long the producer keeps the click topic's metadata while no click is sent. */
  static final Duration METADATA_KEPT_IDLE = Duration.ofDays(30);

  private static final String BUFFER_FULL = "buffer_full";

  private final Producer<String, byte[]> producer;
  private final String topic;
  private final Counter sent;
  private final Counter acknowledged;
  private final Counter failed;
  private final MeterRegistry registry;
  private final Map<String, Counter> dropped = new ConcurrentHashMap<>();
  /** Where the shedding reads the time, {@link System#nanoTime()} but in tests. */
  private final LongSupplier nanoClock;
  /** Time on {@link #nanoClock} until which events are dropped without trying the producer. */
  private volatile long shedUntil;
  private volatile boolean closed;

  public ClickPublisher(Producer<String, byte[]> producer, String topic, MeterRegistry registry) {
    this(producer, topic, registry, System::nanoTime);
  }

  ClickPublisher(Producer<String, byte[]> producer, String topic, MeterRegistry registry, LongSupplier nanoClock) {
    this.nanoClock = nanoClock;
    this.shedUntil = nanoClock.getAsLong();
    this.producer = producer;
    this.topic = topic;
    this.registry = registry;
    this.sent = Counter.builder("tally.click.events.sent").description("events handed to the producer").register(registry);
    this.acknowledged =
        Counter.builder("tally.click.events.acknowledged").description("events the broker acknowledged").register(registry);
    this.failed =
        Counter.builder("tally.click.events.failed")
            .description("events accepted into the buffer whose delivery then failed")
            .register(registry);
    Gauge.builder("tally.kafka.producer.buffer.available.bytes", this, ClickPublisher::bufferAvailableBytes)
        .description("free bytes in the producer's bounded buffer")
        .register(registry);
  }

  /** Producer settings for the redirect path: durable, batched, bounded and never blocking for long. */
  public static Properties producerProperties(String bootstrap, long bufferBytes, Duration maxBlock) {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ProducerConfig.CLIENT_ID_CONFIG, "redirect-web");
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    p.put(ProducerConfig.LINGER_MS_CONFIG, 5);
    p.put(ProducerConfig.BATCH_SIZE_CONFIG, 64 * 1024);
    p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4");
    p.put(ProducerConfig.BUFFER_MEMORY_CONFIG, bufferBytes);
    p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, maxBlock.toMillis());
    // A click older than this is not worth delivering late; it is counted as failed instead.
    p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 120_000);
    p.put(ProducerConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, 1_000);
    // Keep the partition metadata through a broker outage. With the default (rebootstrap) the producer
    // forgets it when every broker is down and refuses each click at once, instead of buffering clicks
    // until the buffer is full and delivering them when the broker is back.
    p.put(CommonClientConfigs.METADATA_RECOVERY_STRATEGY_CONFIG, "none");
    // By default the producer forgets a topic's metadata after 5 idle minutes; the next click would then
    // wait for a metadata fetch longer than max.block.ms and be dropped, so the first click after every
    // quiet spell would be lost. The metadata is still refreshed every metadata.max.age.ms.
    p.put(ProducerConfig.METADATA_MAX_IDLE_CONFIG, METADATA_KEPT_IDLE.toMillis());
    p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
    p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
    return p;
  }

  public static ClickPublisher create(RedirectWebConfig config, MeterRegistry registry) {
    Properties props = producerProperties(config.kafkaBootstrap(), config.kafkaBufferBytes(), config.kafkaMaxBlock());
    return new ClickPublisher(new KafkaProducer<>(props), config.clickTopic(), registry);
  }

  /**
   * Hands one event to the producer and returns at once. Keyed by link code so that one code's clicks
   * stay in one partition, in order.
   */
  public void publish(ClickEvent event) {
    if (nanoClock.getAsLong() - shedUntil < 0) {
      drop(BUFFER_FULL);
      return;
    }
    Delivery delivery = new Delivery();
    try {
      producer.send(ClickRecords.of(topic, event), delivery);
    } catch (RuntimeException e) {
      refused(reason(e));
      return;
    }
    if (!delivery.rejected) {
      sent.increment();
    }
  }

  /** Asks for the topic's metadata so that the first click does not pay for it; gives up quietly. */
  public void warmUp(Duration patience) {
    long deadline = System.nanoTime() + patience.toNanos();
    while (System.nanoTime() < deadline && !closed) {
      try {
        producer.partitionsFor(topic);
        return;
      } catch (TimeoutException e) {
        sleepBriefly();
      } catch (RuntimeException e) {
        LOG.warn("Kafka metadata for {} not available yet: {}", topic, e.toString());
        sleepBriefly();
      }
    }
  }

  /** Whether the broker answered a metadata request just now. */
  public boolean reachable() {
    try {
      return !producer.partitionsFor(topic).isEmpty();
    } catch (RuntimeException e) {
      return false;
    }
  }

  private double bufferAvailableBytes() {
    for (Map.Entry<MetricName, ? extends Metric> e : producer.metrics().entrySet()) {
      if (e.getKey().name().equals("buffer-available-bytes") && e.getKey().group().equals("producer-metrics")) {
        return ((Number) e.getValue().metricValue()).doubleValue();
      }
    }
    return Double.NaN;
  }

  /** The producer refused an event; a full buffer will not have room for the next ones either. */
  private void refused(String reason) {
    if (reason.equals(BUFFER_FULL)) {
      shedUntil = nanoClock.getAsLong() + SHED_FOR.toNanos();
    }
    drop(reason);
  }

  private void drop(String reason) {
    dropped
        .computeIfAbsent(
            reason,
            r -> Counter.builder("tally.click.events.dropped")
                .description("events dropped before entering the producer buffer")
                .tag("reason", r)
                .register(registry))
        .increment();
  }

  private static String reason(Exception e) {
    if (e instanceof BufferExhaustedException) {
      return BUFFER_FULL;
    }
    if (e instanceof TimeoutException) {
      return "metadata_unavailable";
    }
    return "rejected";
  }

  private static void sleepBriefly() {
    try {
      Thread.sleep(50);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public void close() {
    // A warm-up still waiting for metadata stops instead of asking a closed producer until its patience ends.
    closed = true;
    producer.close(Duration.ofSeconds(5));
  }

  /**
   * The outcome of one send. The producer reports a refusal (full buffer, no metadata) by calling back
   * on the sending thread before {@code send} returns; every later outcome arrives on its I/O thread.
   */
  private final class Delivery implements Callback {
    private final Thread sender = Thread.currentThread();
    boolean rejected;

    @Override
    public void onCompletion(RecordMetadata metadata, Exception exception) {
      if (exception == null) {
        acknowledged.increment();
      } else if (Thread.currentThread() == sender) {
        rejected = true;
        refused(reason(exception));
      } else {
        failed.increment();
      }
    }
  }
}
