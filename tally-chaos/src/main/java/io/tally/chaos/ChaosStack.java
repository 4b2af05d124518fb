package io.tally.chaos;

import io.tally.clickjob.ClickCountJob;
import io.tally.embedded.Ports;
import io.tally.event.ClickEvent;
import io.tally.local.ClickJobProcess;
import io.tally.local.ClickTopics;
import io.tally.local.LocalServices;
import io.tally.local.RunningClickJob;
import io.tally.local.flink.ClusterClickJob;
import io.tally.local.flink.FlinkInstall;
import io.tally.local.flink.StandaloneFlinkCluster;
import io.tally.redirect.RedirectWebConfig;
import io.tally.redirect.RedirectWebServer;
import io.tally.testing.ClickEvents;
import io.tally.testing.ClickOracle;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;
import java.util.stream.IntStream;
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
 * One scenario's own stack: a fresh durable PostgreSQL with Tally's schema and a Kafka broker
 * ({@link LocalServices}), the click and dead-letter topics, the click job in a child JVM ({@link
 * ClickJobProcess}) and redirect-web when the scenario asks for it. Closing stops it all.
 */
public final class ChaosStack implements AutoCloseable {

  public static final String CLICKS = ClickTopics.CLICKS;
  public static final String DEAD_LETTERS = ClickTopics.DEAD_LETTERS;

  /** The links and stats API's key of the redirect-web a scenario starts. */
  public static final String API_KEY = "chaos-api-key-0123456789abcdefghijklm";

  private final LocalServices services;
  private final ChaosSettings settings;
  private final List<AutoCloseable> opened = new ArrayList<>();
  private ClickJobProcess job;

  /** The job the scenario runs: {@link #job} unless it runs on a Flink cluster of its own. */
  private RunningClickJob running;

  private ChaosStack(LocalServices services, ChaosSettings settings) {
    this.services = services;
    this.settings = settings;
  }

  public static ChaosStack start(Path dir, ChaosSettings settings) {
    return start(dir, settings, LocalServices.Topology.SINGLE);
  }

  /** A stack whose Kafka and PostgreSQL run as {@code topology} says. */
  public static ChaosStack start(
      Path dir, ChaosSettings settings, LocalServices.Topology topology) {
    LocalServices services =
        LocalServices.start(LocalServices.Spec.scratch(dir, settings.keep(), topology));
    try {
      services.createClickTopics();
      return new ChaosStack(services, settings);
    } catch (RuntimeException | Error e) {
      services.close();
      throw e;
    }
  }

  public LocalServices services() {
    return services;
  }

  public ChaosSettings settings() {
    return settings;
  }

  /** The click job's flags as {@code ./tally up} sets them, with the run's checkpoint interval. */
  public List<String> jobArgs() {
    return jobArgs(2);
  }

  private List<String> jobArgs(int parallelism) {
    List<String> args = new ArrayList<>(services.clickJobFlags());
    String interval = settings.checkpointInterval().toMillis() + "ms";
    args.addAll(
        List.of("--checkpoint-interval", interval, "--parallelism", String.valueOf(parallelism)));
    return args;
  }

  /**
   * Another click job in its own JVM and folder {@code name}, not yet started: on {@code
   * parallelism} subtasks, with {@code extraArgs} after the usual flags.
   */
  public ClickJobProcess newJob(String name, int parallelism, List<String> extraArgs)
      throws Exception {
    List<String> args = jobArgs(parallelism);
    args.addAll(extraArgs);
    ClickJobProcess process = new ClickJobProcess(services.dir().resolve(name), args);
    opened.add(process);
    return process;
  }

  /** The click job in its own JVM, not yet started. */
  public ClickJobProcess job() throws Exception {
    if (job == null) {
      job = new ClickJobProcess(services.dir().resolve("job"), jobArgs());
      opened.add(job);
      if (running == null) {
        running = job;
      }
    }
    return job;
  }

  /** The click job started without state, as every scenario starts it. */
  public ClickJobProcess startJob() throws Exception {
    job().start(Optional.empty());
    return job;
  }

  /**
   * The click job started without state on a standalone Flink cluster of its own (Flink's jars and
   * the job jar as {@code ./tally} names them), submitted with Flink's CLI.
   */
  public ClusterClickJob startJobOnFlinkCluster() throws Exception {
    // Each process's Prometheus reporter on a port of its own, clear of a stack running beside.
    String reporterPorts =
        String.join(
            ",",
            IntStream.range(0, 1 + StandaloneFlinkCluster.TASK_MANAGERS)
                .mapToObj(i -> String.valueOf(Ports.ephemeral()))
                .toList());
    ClusterClickJob cluster =
        ClusterClickJob.start(
            FlinkInstall.fromSystemProperties(),
            services.dir().resolve("flink-cluster"),
            Map.of("metrics.reporter.prom.port", reporterPorts),
            jobArgs());
    opened.add(cluster);
    running = cluster;
    return cluster;
  }

  /** Inserts links with these codes straight into the table. */
  public void createLinks(List<String> codes) throws SQLException {
    services.insertLinks(
        codes, code -> "https://example.com/articles/" + code + "?utm_source=tally-chaos");
  }

  /** Inserts {@code count} links coded {@code prefix} and four digits, and returns their codes. */
  public List<String> createLinks(String prefix, int count) throws SQLException {
    List<String> codes = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      codes.add(String.format(Locale.ROOT, "%s%04d", prefix, i));
    }
    createLinks(codes);
    return codes;
  }

  /**
   * Gives every link whose code starts with {@code prefix} a day row for each of the last {@code
   * days} days, so that the stats API's longest reads have a year to scan, and analyzes the tables.
   */
  public void addDayRows(String prefix, int days) throws SQLException {
    try (Connection c = services.connect();
        PreparedStatement s =
            c.prepareStatement(
                "INSERT INTO click_daily (code, day, clicks, bot_clicks, visitors) SELECT l.code,"
                    + " current_date - d, 1 + (length(l.code) * d) % 97, 1, d % 13 FROM links l,"
                    + " generate_series(1, ?) d WHERE l.code LIKE ? ON CONFLICT DO NOTHING")) {
      s.setInt(1, days);
      s.setString(2, prefix + "%");
      s.execute();
      try (Statement analyze = c.createStatement()) {
        analyze.execute("ANALYZE");
      }
    }
  }

  /**
   * redirect-web on a free port against this stack, with {@code extraEnv} on top of the stack's
   * settings; the caller closes it.
   */
  public RedirectWebServer startRedirectWeb(Map<String, String> extraEnv) {
    Map<String, String> env =
        new HashMap<>(services.redirectWebEnv(API_KEY, "chaos-ip-hash-secret-0123456789abcdef"));
    env.putAll(extraEnv);
    return RedirectWebServer.start(RedirectWebConfig.fromEnv(env));
  }

  /** An idempotent producer with acks=all, as redirect-web's. */
  public KafkaProducer<String, byte[]> producer() {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, services.bootstrapServers());
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
    p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
    p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4");
    p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
    p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
    KafkaProducer<String, byte[]> producer = new KafkaProducer<>(p);
    opened.add(producer);
    return producer;
  }

  /**
   * One click stamped now into every partition: every partition's watermark passes all the data
   * before it, so every minute, hour and day of the data closes. Their codes are left out of the
   * drift.
   */
  public void pushWatermarks(KafkaProducer<String, byte[]> producer) {
    long now = System.currentTimeMillis();
    for (int partition = 0; partition < ClickTopics.CLICK_PARTITIONS; partition++) {
      String code = Drift.FLUSH_PREFIX + partition;
      ClickEvent click = ClickEvents.minimal(UUID.randomUUID(), code, now, false);
      producer.send(ClickEvents.inPartition(CLICKS, partition, click));
    }
    producer.flush();
  }

  /** Where the job's event time has got (its {@code stream_progress} row), or 0 before it tells. */
  public long streamProgress() {
    String sql =
        "SELECT COALESCE((extract(epoch FROM max(closed_before)) * 1000)::bigint, 0)"
            + " FROM stream_progress WHERE job = ?";
    return Math.max(0, count(sql, ClickCountJob.JOB_NAME));
  }

  /**
   * The clicks, human and bot, {@code click_counts} holds for {@code code}; -1 while PostgreSQL
   * does not answer.
   */
  public long clicks(String code) {
    return count(
        "SELECT COALESCE(sum(clicks + bot_clicks), 0) FROM click_counts WHERE code = ?", code);
  }

  /** The clicks, human and bot, {@code click_counts} holds; -1 while PostgreSQL does not answer. */
  public long clicks() {
    return count("SELECT COALESCE(sum(clicks + bot_clicks), 0) FROM click_counts");
  }

  /** The first column of the one row {@code sql} returns; -1 while PostgreSQL does not answer. */
  long count(String sql, String... params) {
    try (Connection c = services.connect();
        PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < params.length; i++) {
        ps.setString(i + 1, params[i]);
      }
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    } catch (SQLException e) {
      return -1;
    }
  }

  public Map<String, Long> drift(ClickOracle truth) throws SQLException {
    try (Connection c = services.connect()) {
      return Drift.measure(c, truth);
    }
  }

  /**
   * Waits until the stored counts equal the truth or {@code timeout} passes; returns the last
   * drift. The time it took is the recovery time of scenarios that end on the counts.
   */
  public Map<String, Long> awaitDriftZero(ClickOracle truth, Duration timeout) throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    Map<String, Long> drift = drift(truth);
    while (Drift.total(drift) != 0 && System.nanoTime() < deadline) {
      Thread.sleep(1000);
      drift = drift(truth);
    }
    return drift;
  }

  /**
   * Closes every minute of the data sent through {@code producer} ({@link #pushWatermarks}) and
   * waits, at most the run's settle time, until the stored counts equal the truth.
   */
  public Map<String, Long> awaitTruth(KafkaProducer<String, byte[]> producer, ClickOracle truth)
      throws Exception {
    pushWatermarks(producer);
    return awaitDriftZero(truth, settings.settle());
  }

  /** What every scenario's row shows at its end: the dead letters by reason, the job's restarts. */
  public void recordLettersAndRestarts(Outcome outcome) throws Exception {
    outcome.deadLetters.putAll(deadLetters().byReason());
    outcome.restarts = running.restarts();
  }

  /** Every record of a topic, from the beginning to its current end. */
  public List<ConsumerRecord<byte[], byte[]>> readAll(String topic) {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, services.bootstrapServers());
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
    p.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, String.valueOf(4 << 20));
    List<ConsumerRecord<byte[], byte[]>> records = new ArrayList<>();
    try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p)) {
      List<TopicPartition> partitions =
          consumer.partitionsFor(topic).stream()
              .map(info -> new TopicPartition(topic, info.partition()))
              .toList();
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      Map<TopicPartition, Long> end = consumer.endOffsets(partitions);
      while (partitions.stream().anyMatch(tp -> consumer.position(tp) < end.get(tp))) {
        consumer.poll(Duration.ofMillis(500)).forEach(records::add);
      }
    }
    return records;
  }

  public DeadLetters deadLetters() {
    return new DeadLetters(readAll(DEAD_LETTERS).stream().map(ConsumerRecord::value).toList());
  }

  /** The dead letters once {@code enough} holds for them, or as they are after 30 s. */
  public DeadLetters awaitDeadLetters(Predicate<DeadLetters> enough) throws Exception {
    return poll(this::deadLetters, enough, Duration.ofSeconds(30));
  }

  /** Polls {@code condition} every 200 ms; false if it did not hold within {@code timeout}. */
  public static boolean await(BooleanSupplier condition, Duration timeout) throws Exception {
    return poll(condition::getAsBoolean, holds -> holds, timeout);
  }

  /**
   * Reads {@code value} every 200 ms until {@code enough} holds for it or {@code timeout} has
   * passed; returns the last read.
   */
  public static <T> T poll(Callable<T> value, Predicate<T> enough, Duration timeout)
      throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    T last = value.call();
    while (!enough.test(last) && System.nanoTime() < deadline) {
      Thread.sleep(200);
      last = value.call();
    }
    return last;
  }

  @Override
  public void close() {
    for (int i = opened.size() - 1; i >= 0; i--) {
      try {
        opened.get(i).close();
      } catch (Exception e) {
        // Stopping the rest matters more than this one's error.
      }
    }
    services.close();
  }
}
