package io.tally.bench.pipeline;

import static io.tally.testing.Table.count;
import static io.tally.testing.Table.fmt;

import io.tally.bench.support.Columns;
import io.tally.bench.support.Report;
import io.tally.event.ClickEvent;
import io.tally.event.ClickEventCodec;
import io.tally.event.Decoded;
import io.tally.local.ClickTopics;
import io.tally.local.LocalServices;
import io.tally.testing.Table;
import java.io.PrintStream;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.function.UnaryOperator;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * {@code bench pipeline} and {@code bench reconcile}: a click data set preloaded into a topic and
 * read by a plain Kafka consumer, the ceiling on this machine that the streaming click job ({@link
 * StreamingJobBenchmark}) and the reconciliation job ({@link ReconcileBenchmark}) are held against.
 */
public final class PipelineBenchmark {

  static final String TOPIC = "bench-clicks";
  static final String DLQ_TOPIC = "bench-clicks-dlq";
  static final int PARTITIONS = 4;

  /** What to run. */
  public record Settings(
      int events,
      int codes,
      double duplicates,
      Duration span,
      int rawRuns,
      int parallelism,
      Duration idleTimeout,
      Duration lagDuration,
      Map<String, String> flinkConf,
      long seed,
      int hotEvents,
      int agentEvents,
      List<Integer> extraParallelisms) {}

  private final LocalServices stack;
  private final Settings settings;
  private final PrintStream out;
  private final Report report;
  private ClickDataset.Truth truth;
  private double rawCountRate;
  private double rawDecodeRate;

  private PipelineBenchmark(
      LocalServices stack, Settings settings, PrintStream out, Report report) {
    this.stack = stack;
    this.settings = settings;
    this.out = out;
    this.report = report;
  }

  /**
   * A benchmark whose data set is in the topic and whose ceiling, the plain consumer's rate, is
   * measured: what the streaming job and the reconcile job are compared against.
   */
  public static PipelineBenchmark prepared(
      LocalServices stack, Settings settings, PrintStream out, Report report) {
    PipelineBenchmark bench = new PipelineBenchmark(stack, settings, out, report);
    bench.truth =
        bench.preload(
            TOPIC,
            settings.events(),
            settings.codes(),
            "Zipf(s=1) over " + settings.codes() + " links");
    bench.rawConsumer();
    return bench;
  }

  /** Writes a data set into a fresh topic with a producer tuned for bulk loading. */
  ClickDataset.Truth preload(String topic, int events, int codes, String workload) {
    return preload(topic, events, codes, workload, UnaryOperator.identity());
  }

  /** The same, each event reshaped on its way to the topic. */
  ClickDataset.Truth preload(
      String topic, int events, int codes, String workload, UnaryOperator<ClickEvent> reshape) {
    stack.createTopics(List.of(ClickTopics.clicks(topic, PARTITIONS)));
    if (topic.equals(TOPIC)) {
      stack.createTopics(List.of(ClickTopics.deadLetters(DLQ_TOPIC)));
    }
    Instant to = Instant.now().minus(Duration.ofMinutes(10)).truncatedTo(ChronoUnit.MINUTES);
    Instant from = to.minus(settings.span());
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, stack.bootstrapServers());
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.LINGER_MS_CONFIG, 20);
    p.put(ProducerConfig.BATCH_SIZE_CONFIG, 512 * 1024);
    p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4");
    p.put(ProducerConfig.BUFFER_MEMORY_CONFIG, 128L * 1024 * 1024);
    p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
    p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
    long start = System.nanoTime();
    ClickDataset.Truth truth;
    try (KafkaProducer<String, byte[]> producer = new KafkaProducer<>(p)) {
      truth =
          ClickDataset.write(
              producer,
              topic,
              events,
              codes,
              settings.duplicates(),
              from,
              settings.span(),
              settings.seed(),
              reshape);
    }
    double seconds = (System.nanoTime() - start) / 1e9;
    new Columns<ClickDataset.Truth>()
        .and("events", data -> count(data.events()))
        .and("distinct clicks", data -> count(data.distinct()))
        .and("duplicates", data -> count(data.duplicates()))
        .and("bot clicks", data -> count(data.distinctBots()))
        .and("(code, minute) rows", data -> count(data.rows()))
        .and("avg event bytes", data -> fmt(data.bytes() / (double) data.events(), 0))
        .and("event time", data -> data.from() + " .. " + data.to())
        .and("preload events/s", data -> fmt(data.events() / seconds, 0))
        .table("Preloaded click topic: " + workload, List.of(truth))
        .note(
            "Topic "
                + topic
                + ", "
                + PARTITIONS
                + " partitions, records as redirect-web writes them (ClickRecords), "
                + workload
                + ", seed "
                + settings.seed()
                + "; one producer, acks=all, lz4, linger 20 ms, 512 KiB batches.")
        .print(out);
    return truth;
  }

  /**
   * Reads the whole topic with one plain consumer, counting only, then decoding too; the best run
   * counts.
   */
  private void rawConsumer() {
    Table t =
        new Table(
            "Plain KafkaConsumer over the whole topic (the ceiling)",
            "run",
            "count only events/s",
            "+ codec decode events/s");
    for (int run = 1; run <= settings.rawRuns(); run++) {
      double counting = consume(false);
      double decoding = consume(true);
      rawCountRate = Math.max(rawCountRate, counting);
      rawDecodeRate = Math.max(rawDecodeRate, decoding);
      t.row(run, fmt(counting, 0), fmt(decoding, 0));
    }
    t.row("best", fmt(rawCountRate, 0), fmt(rawDecodeRate, 0));
    t.note(
        "One consumer thread, partitions assigned (no group), from the earliest offset to the end;"
            + " decode = ClickEventCodec.decode, the contract's JSON parser and validation.");
    t.print(out);
  }

  private double consume(boolean decode) {
    try (KafkaConsumer<byte[], byte[]> consumer = consumer()) {
      List<TopicPartition> partitions = partitions(consumer, TOPIC);
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      long total =
          consumer.endOffsets(partitions).values().stream().mapToLong(Long::longValue).sum();
      long read = 0;
      long valid = 0;
      long start = System.nanoTime();
      while (read < total) {
        for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(200))) {
          read++;
          if (decode
              && ClickEventCodec.decode(record.value(), record.timestamp())
                  instanceof Decoded.Valid) {
            valid++;
          }
        }
      }
      double seconds = (System.nanoTime() - start) / 1e9;
      if (decode && valid != total) {
        throw new IllegalStateException("decoded " + valid + " valid events of " + total);
      }
      return read / seconds;
    }
  }

  /** The records a topic holds: the sum of its partitions' end offsets. */
  long endOffsets(String topic) {
    try (KafkaConsumer<byte[], byte[]> consumer = consumer()) {
      return consumer.endOffsets(partitions(consumer, topic)).values().stream()
          .mapToLong(Long::longValue)
          .sum();
    }
  }

  /** A consumer of raw records from the earliest offset, fetching in bulk, committing nothing. */
  private KafkaConsumer<byte[], byte[]> consumer() {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, stack.bootstrapServers());
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 10_000);
    p.put(ConsumerConfig.FETCH_MAX_BYTES_CONFIG, 64 * 1024 * 1024);
    p.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, 8 * 1024 * 1024);
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
    return new KafkaConsumer<>(p);
  }

  private static List<TopicPartition> partitions(KafkaConsumer<?, ?> consumer, String topic) {
    return consumer.partitionsFor(topic).stream()
        .map(info -> new TopicPartition(topic, info.partition()))
        .toList();
  }

  ClickDataset.Truth truth() {
    return truth;
  }

  double rawCountRate() {
    return rawCountRate;
  }

  double rawDecodeRate() {
    return rawDecodeRate;
  }

  Settings settings() {
    return settings;
  }

  /** The streaming job's runs on the preloaded topic ({@link StreamingJobBenchmark}). */
  public void streamingJob() throws Exception {
    new StreamingJobBenchmark(stack, this, out, report).run();
  }

  /**
   * This build's click job and {@code ref}'s, alternately on the preloaded topic, {@code rounds}
   * times A B B A ({@link AgainstBenchmark}).
   */
  public void against(String ref, int rounds) throws Exception {
    new AgainstBenchmark(stack, this, out, report).run(ref, rounds);
  }

  /** The reconciliation job's replay of the preloaded topic ({@link ReconcileBenchmark}). */
  public void reconcile() throws Exception {
    new ReconcileBenchmark(stack, this, out, report).run();
  }
}
