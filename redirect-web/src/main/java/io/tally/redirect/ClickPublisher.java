package io.tally.redirect;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.tally.event.ClickEvent;
import io.tally.event.ClickRecords;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
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
 * Fires click events at Kafka without ever making a redirect wait, and accounts for every one of
 * them: redirect-web's {@link ClickSink}.
 *
 * <p>{@link #publish} hands the event to the producer's bounded buffer and returns. The producer
 * waits at most {@code max.block.ms} (a couple of milliseconds) for room or metadata; when Kafka is
 * slow or down the buffer fills and further events are dropped. Once the producer has refused an
 * event for a full buffer or for missing metadata, events are dropped without asking it for {@link
 * #SHED_FOR}: otherwise every redirect of an outage, or of a start while Kafka is down, would wait
 * out {@code max.block.ms} ({@code bench broker-down} measures the cost, docs/benchmarks.md).
 * Sending resumes by itself when the broker is back; an event still buffered after {@code
 * delivery.timeout.ms} is given up.
 *
 * <p>Every published event ends in exactly one of two counters: {@code
 * tally.click.events.acknowledged} or {@code tally.click.events.dropped} with the reason it was
 * lost, so that once nothing is in flight {@code sent = acknowledged + dropped}, summed over every
 * reason.
 */
public final class ClickPublisher implements ClickSink {

  private static final Logger LOG = LoggerFactory.getLogger(ClickPublisher.class);

  /**
   * How long events are dropped at once after the producer refused one for a full buffer or no
   * metadata.
   */
  static final Duration SHED_FOR = Duration.ofMillis(50);

  /** How long the producer keeps the click topic's metadata while no click is sent. */
  static final Duration METADATA_KEPT_IDLE = Duration.ofDays(30);

  /**
   * How long closing waits for buffered events to be delivered before the producer gives them up.
   */
  private static final Duration CLOSE_PATIENCE = Duration.ofSeconds(5);

  /**
   * The producer's {@code linger.ms}: how long a batch waits for more clicks before it is sent.
   * Each batch costs a produce request in the producer's I/O thread and in the broker, and lz4
   * allocates its block buffers afresh for every batch, on the thread that opens it (a request
   * thread), so fewer, fuller batches make each click cheaper; the wait is far below the click
   * job's five seconds of allowed out-of-orderness, so counts are not later for it
   * (docs/benchmarks.md, on what counting costs the request).
   */
  private static final int LINGER_MS = 20;

  /**
   * The producer's default {@code request.timeout.ms}, kept unless the delivery timeout is shorter.
   */
  private static final int REQUEST_TIMEOUT_MS = 30_000;

  /** Why an event was dropped: the {@code reason} tag of {@code tally.click.events.dropped}. */
  enum DropReason {
    /**
     * Refused before the buffer: the buffer had no room within {@code max.block.ms}, or is being
     * shed.
     */
    BUFFER_FULL,
    /**
     * Refused before the buffer: the topic's partitions were not known within {@code max.block.ms}.
     */
    METADATA_UNAVAILABLE,
    /** Refused before the buffer for any other reason (the producer closed or broken). */
    REJECTED,
    /** Taken into the buffer but not acknowledged within {@code delivery.timeout.ms}. */
    DELIVERY_TIMEOUT,
    /** Still in the buffer when redirect-web shut down and the producer's close gave up on it. */
    CLOSED,
    /**
     * Taken into the buffer, then refused by the broker for good (too large, not authorised ...).
     */
    SEND_FAILED,
    /**
     * Never made: the request's facts gave no valid event. {@link ClickEventFactory} shapes every
     * field, so this is a fault of ours; the redirect is answered all the same.
     */
    INVALID;

    final String tag = name().toLowerCase(Locale.ROOT);
  }

  /**
   * Until when, on {@link #nanoClock}, events are dropped without trying the producer, and as what.
   */
  private record Shedding(long until, DropReason reason) {}

  private final Producer<String, byte[]> producer;
  private final String topic;
  private final Counter sent;
  private final Counter acknowledged;
  private final Map<DropReason, Counter> dropped = new EnumMap<>(DropReason.class);
  private final SendDrops sendDrops;

  /** Where the shedding reads the time, {@link System#nanoTime()} but in tests. */
  private final LongSupplier nanoClock;

  private volatile Shedding shedding;
  private volatile boolean closed;
  private volatile boolean warnedInvalid;

  public ClickPublisher(Producer<String, byte[]> producer, String topic, MeterRegistry registry) {
    this(producer, topic, registry, System::nanoTime, null);
  }

  ClickPublisher(
      Producer<String, byte[]> producer,
      String topic,
      MeterRegistry registry,
      LongSupplier nanoClock) {
    this(producer, topic, registry, nanoClock, null);
  }

  /**
   * @param sendDrops where each drop is also kept by its minute, closed with the publisher; null
   *     for none
   */
  ClickPublisher(
      Producer<String, byte[]> producer,
      String topic,
      MeterRegistry registry,
      LongSupplier nanoClock,
      SendDrops sendDrops) {
    this.sendDrops = sendDrops;
    this.nanoClock = nanoClock;
    this.shedding = new Shedding(nanoClock.getAsLong(), DropReason.BUFFER_FULL);
    this.producer = producer;
    this.topic = topic;
    this.sent =
        Counter.builder("tally.click.events.sent")
            .description(
                "click events published, one per counted redirect; each ends acknowledged or"
                    + " dropped")
            .register(registry);
    this.acknowledged =
        Counter.builder("tally.click.events.acknowledged")
            .description("events the broker acknowledged")
            .register(registry);
    // Every reason is registered up front, so that a rate of drops can be alerted on before the
    // first one.
    for (DropReason reason : DropReason.values()) {
      dropped.put(
          reason,
          Counter.builder("tally.click.events.dropped")
              .description(
                  "events given up without the broker's acknowledgement, refused before the buffer"
                      + " or lost from it")
              .tag("reason", reason.tag)
              .register(registry));
    }
    Gauge.builder(
            "tally.kafka.producer.buffer.available.bytes",
            this,
            ClickPublisher::bufferAvailableBytes)
        .description("free bytes in the producer's bounded buffer")
        .register(registry);
  }

  /**
   * Producer settings for the redirect path: durable, batched, bounded and never blocking for long.
   * An event the broker has not acknowledged within {@code deliveryTimeout} of its send is given up
   * (see docs/operations.md, "Kafka outages", for why the default is what it is).
   */
  public static Properties producerProperties(
      String bootstrap, long bufferBytes, Duration maxBlock, Duration deliveryTimeout) {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ProducerConfig.CLIENT_ID_CONFIG, "redirect-web");
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    p.put(ProducerConfig.LINGER_MS_CONFIG, LINGER_MS);
    p.put(ProducerConfig.BATCH_SIZE_CONFIG, 64 * 1024);
    p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4");
    p.put(ProducerConfig.BUFFER_MEMORY_CONFIG, bufferBytes);
    p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, maxBlock.toMillis());
    p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, Math.toIntExact(deliveryTimeout.toMillis()));
    // The producer refuses a delivery timeout shorter than linger.ms + request.timeout.ms.
    p.put(
        ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG,
        (int) Math.min(REQUEST_TIMEOUT_MS, deliveryTimeout.toMillis() - LINGER_MS));
    p.put(ProducerConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, 1_000);
    // Keep the partition metadata through a broker outage. With the default (rebootstrap) the
    // producer forgets it when every broker is down and refuses each click at once, instead of
    // buffering clicks until the buffer is full and delivering them when the broker is back.
    p.put(CommonClientConfigs.METADATA_RECOVERY_STRATEGY_CONFIG, "none");
    // By default the producer forgets a topic's metadata after 5 idle minutes; the next click would
    // then wait for a metadata fetch longer than max.block.ms and be dropped, so the first click
    // after every quiet spell would be lost. The metadata is still refreshed every
    // metadata.max.age.ms.
    p.put(ProducerConfig.METADATA_MAX_IDLE_CONFIG, METADATA_KEPT_IDLE.toMillis());
    p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
    p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
    return p;
  }

  /**
   * The publisher redirect-web runs with, its drops kept by minute in what {@code sendDrops} makes
   * once the producer is made (null for none).
   */
  public static ClickPublisher create(
      RedirectWebConfig config, MeterRegistry registry, Supplier<SendDrops> sendDrops) {
    Properties props =
        producerProperties(
            config.kafkaBootstrap(),
            config.kafkaBufferBytes(),
            config.kafkaMaxBlock(),
            config.kafkaDeliveryTimeout());
    props.putAll(config.kafkaSecurity().clientProperties());
    KafkaProducer<String, byte[]> producer = new KafkaProducer<>(props);
    return new ClickPublisher(
        producer,
        config.clickTopic(),
        registry,
        System::nanoTime,
        sendDrops == null ? null : sendDrops.get());
  }

  /**
   * Publishes the click's event ({@link #publish}); a click whose event cannot be made is counted
   * as sent and dropped, and its redirect is answered as any other.
   */
  @Override
  public void accept(Click click) {
    ClickEvent event;
    try {
      event = click.event();
    } catch (RuntimeException e) {
      sent.increment();
      drop(DropReason.INVALID, System.currentTimeMillis());
      // One warning with its trace finds the fault; one per click would bury the rest of the log.
      if (!warnedInvalid) {
        warnedInvalid = true;
        LOG.warn("a click of {} made no valid event and was dropped", click.code(), e);
      }
      return;
    }
    publish(event);
  }

  /**
   * Hands one event to the producer and returns at once. The record has no key ({@link
   * ClickRecords}): the producer fills one partition's batch at a time, so a popular link's clicks
   * spread over every partition.
   */
  public void publish(ClickEvent event) {
    sent.increment();
    Shedding shed = shedding;
    if (nanoClock.getAsLong() - shed.until() < 0) {
      drop(shed.reason(), event.ts());
      return;
    }
    try {
      producer.send(ClickRecords.of(topic, event), new Delivery(event.ts()));
    } catch (RuntimeException e) {
      refused(refusalReason(e), event.ts());
    }
  }

  /**
   * Asks for the topic's metadata so that the first click does not pay for it; gives up quietly.
   */
  @Override
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
      if (e.getKey().name().equals("buffer-available-bytes")
          && e.getKey().group().equals("producer-metrics")) {
        return ((Number) e.getValue().metricValue()).doubleValue();
      }
    }
    return Double.NaN;
  }

  /**
   * The producer refused an event before taking it into its buffer. A full buffer will not have
   * room for the next events either, and missing metadata will not arrive within their {@code
   * max.block.ms}: the events of the next {@link #SHED_FOR} are dropped without asking, so no
   * redirect waits for either.
   */
  private void refused(DropReason reason, long clickTs) {
    if (reason == DropReason.BUFFER_FULL || reason == DropReason.METADATA_UNAVAILABLE) {
      shedding = new Shedding(nanoClock.getAsLong() + SHED_FOR.toNanos(), reason);
    }
    drop(reason, clickTs);
  }

  /** Counts a dropped click, kept by the minute it was answered in, not the one it was given up. */
  private void drop(DropReason reason, long clickTs) {
    dropped.get(reason).increment();
    if (sendDrops != null) {
      sendDrops.record(clickTs);
    }
  }

  private DropReason refusalReason(Exception e) {
    if (e instanceof BufferExhaustedException) {
      return DropReason.BUFFER_FULL;
    }
    if (e instanceof TimeoutException) {
      return DropReason.METADATA_UNAVAILABLE;
    }
    return DropReason.REJECTED;
  }

  /** Why an event the producer had taken into its buffer was given up. */
  private DropReason lossReason(Exception e) {
    if (e instanceof TimeoutException) {
      return DropReason.DELIVERY_TIMEOUT;
    }
    if (closed) {
      return DropReason.CLOSED;
    }
    return DropReason.SEND_FAILED;
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
    // A warm-up still waiting for metadata stops instead of asking a closed producer until its
    // patience ends.
    closed = true;
    // Events still buffered after this are failed by the producer, each counted as dropped
    // (closed).
    producer.close(CLOSE_PATIENCE);
    if (sendDrops != null) {
      sendDrops.close();
    }
  }

  /**
   * The outcome of one send. The producer reports a refusal (full buffer, no metadata) by calling
   * back on the sending thread before {@code send} returns; every later outcome arrives on its I/O
   * thread.
   */
  private final class Delivery implements Callback {
    private final Thread sender = Thread.currentThread();
    private final long clickTs;

    Delivery(long clickTs) {
      this.clickTs = clickTs;
    }

    @Override
    public void onCompletion(RecordMetadata metadata, Exception exception) {
      if (exception == null) {
        acknowledged.increment();
      } else if (Thread.currentThread() == sender) {
        refused(refusalReason(exception), clickTs);
      } else {
        drop(lossReason(exception), clickTs);
      }
    }
  }
}
