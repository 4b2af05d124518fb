package io.tally.bench.brokers;

import static io.tally.testing.Table.count;
import static io.tally.testing.Table.fmt;

import io.tally.bench.support.CpuMeter;
import io.tally.bench.support.Report;
import io.tally.embedded.KafkaBrokerCluster;
import io.tally.event.ClickRecords;
import io.tally.local.ClickTopics;
import io.tally.redirect.ClickPublisher;
import io.tally.testing.ClickStream;
import io.tally.testing.Table;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * What the brokers spend per click, on a cluster of KRaft nodes in processes of their own: click
 * records sent at a fixed rate with redirect-web's producer settings while a consumer group reads
 * them as the click job does, into a topic of one replica and one of three (two in sync required),
 * in the order A B B A after two warm-up phases on each. The brokers' CPU is read from the
 * operating system per process, so the figure holds leaders, followers, the controller quorum and
 * the group coordinator; the disk is the topic's folders summed over the nodes.
 */
public final class BrokerCostBenchmark {

  /** The benchmark's settings. */
  public record Settings(int eventsPerPhase, int rate, int codes, long seed) {}

  private static final String CODE_PREFIX = "B";
  private static final short ONE = 1;
  private static final short MANY = 3;
  private static final int WARM_UP_PHASES = 4;

  private final KafkaBrokerCluster cluster;
  private final Settings settings;
  private final PrintStream out;

  public BrokerCostBenchmark(KafkaBrokerCluster cluster, Settings settings, PrintStream out) {
    this.cluster = cluster;
    this.settings = settings;
    this.out = out;
  }

  /** One phase: a topic, the clicks sent into it and what the brokers spent meanwhile. */
  record Phase(String topic, short replicas, long clicks, double seconds, double brokerCpuSeconds) {
    double cpuMicrosPerClick() {
      return brokerCpuSeconds * 1e6 / clicks;
    }
  }

  public void run(Report report) throws Exception {
    Map<Short, String> topics = new LinkedHashMap<>();
    topics.put(ONE, "clicks-rf" + ONE);
    topics.put(MANY, "clicks-rf" + MANY);
    cluster.createTopics(
        topics.entrySet().stream()
            .map(t -> ClickTopics.clicks(t.getValue(), ClickTopics.CLICK_PARTITIONS, t.getKey()))
            .toList());
    List<Phase> phases = new ArrayList<>();
    long seed = settings.seed();
    // The node JVMs compile their hot paths over the first phases (seen: a click costs four times
    // as much in the first as in the sixth), so two of each are not counted.
    List<Phase> warmUp = new ArrayList<>();
    for (short replicas : new short[] {ONE, MANY, ONE, MANY, ONE, MANY, MANY, ONE}) {
      Phase phase = phase(topics.get(replicas), replicas, seed++);
      (warmUp.size() < WARM_UP_PHASES ? warmUp : phases).add(phase);
    }
    print(warmUp, phases, topics, report);
  }

  private Phase phase(String topic, short replicas, long seed) throws Exception {
    AtomicBoolean sending = new AtomicBoolean(true);
    AtomicLong consumed = new AtomicLong();
    AtomicReference<Throwable> consumerError = new AtomicReference<>();
    Thread reader =
        new Thread(
            () -> {
              try {
                consume(cluster.bootstrapServers(), topic, sending, consumed);
              } catch (RuntimeException e) {
                consumerError.set(e);
              }
            },
            "bench-consumer");
    reader.start();
    double cpuBefore = brokerCpuSeconds();
    long start = System.nanoTime();
    long sent = send(cluster.bootstrapServers(), topic, seed);
    // The phase ends when the group has read what was sent, so that the consumer's fetches are
    // part of the cost.
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (consumed.get() < sent && System.nanoTime() < deadline) {
      Thread.sleep(50);
    }
    double seconds = (System.nanoTime() - start) / 1e9;
    double cpu = brokerCpuSeconds() - cpuBefore;
    sending.set(false);
    reader.join();
    if (consumerError.get() != null) {
      throw new IllegalStateException("the consumer failed", consumerError.get());
    }
    if (consumed.get() < sent) {
      throw new IllegalStateException(
          "the consumer read " + consumed.get() + " of " + sent + " clicks of " + topic);
    }
    return new Phase(topic, replicas, sent, seconds, cpu);
  }

  /** Sends the phase's clicks at the fixed rate, in slices of a millisecond's worth or more. */
  private long send(String bootstrap, String topic, long seed) throws InterruptedException {
    Properties p =
        ClickPublisher.producerProperties(
            bootstrap, 32L * 1024 * 1024, Duration.ofSeconds(10), Duration.ofSeconds(60));
    p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
    p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
    Instant from = Instant.now().minus(Duration.ofHours(1));
    ClickStream stream =
        new ClickStream(
            click -> {},
            CODE_PREFIX,
            settings.codes(),
            from.toEpochMilli(),
            Duration.ofHours(1).toMillis(),
            settings.eventsPerPhase(),
            0,
            seed);
    AtomicReference<Exception> refused = new AtomicReference<>();
    long sent = 0;
    long start = System.nanoTime();
    try (KafkaProducer<String, byte[]> producer = new KafkaProducer<>(p)) {
      while (stream.hasNext()) {
        long due = (long) ((System.nanoTime() - start) / 1e9 * settings.rate()) + 1;
        while (sent < due && stream.hasNext()) {
          producer.send(
              ClickRecords.of(topic, stream.next()),
              (metadata, error) -> {
                if (error != null) {
                  refused.compareAndSet(null, error);
                }
              });
          sent++;
        }
        Thread.sleep(1);
      }
      producer.flush();
    }
    if (refused.get() != null) {
      throw new IllegalStateException("the brokers refused a click", refused.get());
    }
    return sent;
  }

  /** Reads the topic in a consumer group, committing as the click job's source does. */
  private static void consume(
      String bootstrap, String topic, AtomicBoolean sending, AtomicLong consumed) {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ConsumerConfig.GROUP_ID_CONFIG, "bench-brokers-" + topic);
    // One group per topic: the second phase on a topic starts where the first one's group left.
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, true);
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
    try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p)) {
      consumer.subscribe(List.of(topic));
      while (sending.get()) {
        consumed.addAndGet(consumer.poll(Duration.ofMillis(100)).count());
      }
    }
  }

  private double brokerCpuSeconds() {
    long nanos = 0;
    for (ProcessHandle broker : cluster.processes()) {
      if (!broker.isAlive()) {
        throw new IllegalStateException("broker process " + broker.pid() + " has ended");
      }
      nanos += CpuMeter.cpu(broker);
    }
    return nanos / 1e9;
  }

  private static long topicBytes(Path kafkaDir, String topic) {
    try (Stream<Path> files = Files.walk(kafkaDir)) {
      return files
          .filter(f -> f.getParent().getFileName().toString().startsWith(topic + "-"))
          .filter(f -> f.getFileName().toString().endsWith(".log"))
          .mapToLong(
              f -> {
                try {
                  return Files.size(f);
                } catch (IOException e) {
                  throw new UncheckedIOException(e);
                }
              })
          .sum();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private void print(
      List<Phase> warmUp, List<Phase> phases, Map<Short, String> topics, Report report) {
    Table t =
        new Table(
            "bench brokers: "
                + cluster.size()
                + " KRaft nodes in processes of their own, clicks at "
                + count(settings.rate())
                + "/s with redirect-web's producer settings, a consumer group reading",
            "phase",
            "topic",
            "replicas",
            "clicks",
            "clicks/s",
            "broker CPU (s)",
            "broker CPU µs per click");
    int n = 1;
    for (Phase phase : Stream.concat(warmUp.stream(), phases.stream()).toList()) {
      t.row(
          n <= warmUp.size() ? n++ + " (warm-up)" : n++,
          phase.topic(),
          phase.replicas(),
          count(phase.clicks()),
          fmt(phase.clicks() / phase.seconds(), 0),
          fmt(phase.brokerCpuSeconds(), 2),
          fmt(phase.cpuMicrosPerClick(), 2));
    }
    t.note(
        "CPU of the node processes (all threads: leaders, followers, the KRaft quorum, the group"
            + " coordinator, GC) from the operating system, from the first send until the group"
            + " had read every click. The topic of "
            + MANY
            + " replicas has min.insync.replicas 2; every phase uses acks=all and idempotence,"
            + " linger 20 ms and lz4, as redirect-web does.");
    t.print(out);

    Table disk =
        new Table("Disk per click, every replica on every node", "topic", "bytes", "per click");
    for (Map.Entry<Short, String> topic : topics.entrySet()) {
      long clicks =
          Stream.concat(warmUp.stream(), phases.stream())
              .filter(p -> p.topic().equals(topic.getValue()))
              .mapToLong(Phase::clicks)
              .sum();
      long bytes = topicBytes(cluster.dataDir(), topic.getValue());
      disk.row(topic.getValue(), count(bytes), fmt(bytes / (double) clicks, 1));
      report.ratio("brokers.rf" + topic.getKey(), "disk_bytes_per_click", bytes / (double) clicks);
    }
    disk.note(
        "Log segments summed over the nodes' data folders, warm-up included; indexes left out"
            + " (Kafka preallocates them, and they are a small share once segments fill).");
    disk.print(out);

    double one = meanMicros(phases, ONE);
    double replicated = meanMicros(phases, MANY);
    report.ratio("brokers.rf" + ONE, "cpu_us_per_click", one);
    report.ratio("brokers.rf" + MANY, "cpu_us_per_click", replicated);
    report.ratio("brokers.rf" + MANY + "/rf" + ONE, "cpu_per_click", replicated / one);
  }

  private static double meanMicros(List<Phase> phases, short replicas) {
    return phases.stream()
        .filter(p -> p.replicas() == replicas)
        .mapToDouble(Phase::cpuMicrosPerClick)
        .average()
        .orElse(Double.NaN);
  }
}
