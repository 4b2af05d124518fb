package io.tally.bench.pipeline;

import static io.tally.bench.support.Table.count;
import static io.tally.bench.support.Table.fmt;

import com.fasterxml.jackson.databind.JsonNode;
import io.tally.bench.support.BenchStack;
import io.tally.bench.support.CpuMeter;
import io.tally.bench.support.Report;
import io.tally.bench.support.Table;
import io.tally.clickjob.ClickCountJob;
import io.tally.clickjob.ClickJobOptions;
import io.tally.clickjob.io.WallClockWatermarks;
import io.tally.embedded.Ports;
import io.tally.event.ClickEventCodec;
import io.tally.event.Decoded;
import io.tally.reconcile.ReconcileJob;
import io.tally.reconcile.ReconcileOptions;
import io.tally.reconcile.ReconcileReport;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import io.tally.bench.support.Histograms;
import java.util.ArrayList;
import org.HdrHistogram.Histogram;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.JobListener;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code bench pipeline} and {@code bench reconcile}: a preloaded click topic read by a plain Kafka
 * consumer (the ceiling on this machine), by the streaming click job on a MiniCluster, and by the
 * reconciliation job in BATCH mode.
 */
public final class PipelineBenchmark {

  private static final Logger LOG = LoggerFactory.getLogger(PipelineBenchmark.class);
  static final String TOPIC = "bench-clicks";
  static final String DLQ_TOPIC = "bench-clicks-dlq";
  static final int PARTITIONS = 4;
  private static final String DEDUP_VERTEX = "Drop duplicate click ids";

  /** What to run. */
  public record Settings(int events, int codes, double duplicates, Duration span, int rawRuns, int parallelism,
                         Duration idleTimeout, Duration lagDuration, Map<String, String> flinkConf, long seed) {}

  private static final int LIVE_CLICKS_PER_SECOND = 2_000;
  private static final int LIVE_CODES = 1_000;

  private final BenchStack stack;
  private final Settings settings;
  private final PrintStream out;
  private final Report report;
  private final CpuMeter cpu;
  private ClickDataset.Truth truth;
  private double rawCountRate;
  private double rawDecodeRate;

  private PipelineBenchmark(BenchStack stack, Settings settings, PrintStream out, Report report) {
    this.stack = stack;
    this.settings = settings;
    this.out = out;
    this.report = report;
    this.cpu = new CpuMeter(stack.postmasterPid());
  }

  /**
   * A benchmark whose data set is in the topic and whose ceiling, the plain consumer's rate, is measured:
   * what the streaming job and the reconcile job are compared against.
   */
  public static PipelineBenchmark prepared(BenchStack stack, Settings settings, PrintStream out, Report report) {
    PipelineBenchmark bench = new PipelineBenchmark(stack, settings, out, report);
    bench.preload();
    bench.rawConsumer();
    return bench;
  }

  /** Writes the data set into a fresh topic with a producer tuned for bulk loading. */
  private void preload() {
    stack.createTopic(TOPIC, PARTITIONS);
    stack.createTopic(DLQ_TOPIC, 1);
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
    try (KafkaProducer<String, byte[]> producer = new KafkaProducer<>(p)) {
      truth = ClickDataset.write(producer, TOPIC, settings.events(), settings.codes(), settings.duplicates(), from,
          settings.span(), settings.seed());
      producer.flush();
    }
    double seconds = (System.nanoTime() - start) / 1e9;
    Table t = new Table("Preloaded click topic", "events", "distinct clicks", "duplicates", "bot clicks", "(code, minute) rows",
        "avg event bytes", "event time", "preload events/s");
    t.row(count(truth.events()), count(truth.distinct()), count(truth.duplicates()), count(truth.distinctBots()),
        count(truth.rows()), fmt(truth.bytes() / (double) truth.events(), 0), truth.from() + " .. " + truth.to(),
        fmt(truth.events() / seconds, 0));
    t.note("Topic " + TOPIC + ", " + PARTITIONS + " partitions, key = code, Zipf(s=1) over " + settings.codes()
        + " codes, seed " + settings.seed() + "; one producer, acks=all, lz4, linger 20 ms, 512 KiB batches.");
    t.print(out);
  }

  /** Reads the whole topic with one plain consumer, counting only, then decoding too; the best run counts. */
  private void rawConsumer() {
    Table t = new Table("Plain KafkaConsumer over the whole topic (the ceiling)", "run", "count only events/s",
        "+ codec decode events/s");
    for (int run = 1; run <= settings.rawRuns(); run++) {
      double counting = consume(false);
      double decoding = consume(true);
      rawCountRate = Math.max(rawCountRate, counting);
      rawDecodeRate = Math.max(rawDecodeRate, decoding);
      t.row(run, fmt(counting, 0), fmt(decoding, 0));
    }
    t.row("best", fmt(rawCountRate, 0), fmt(rawDecodeRate, 0));
    t.note("One consumer thread, partitions assigned (no group), from the earliest offset to the end;"
        + " decode = ClickEventCodec.decode, the contract's JSON parser and validation.");
    t.print(out);
  }

  private double consume(boolean decode) {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, stack.bootstrapServers());
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 10_000);
    p.put(ConsumerConfig.FETCH_MAX_BYTES_CONFIG, 64 * 1024 * 1024);
    p.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, 8 * 1024 * 1024);
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
    try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p)) {
      List<TopicPartition> partitions = new ArrayList<>();
      for (PartitionInfo info : consumer.partitionsFor(TOPIC)) {
        partitions.add(new TopicPartition(TOPIC, info.partition()));
      }
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      long total = consumer.endOffsets(partitions).values().stream().mapToLong(Long::longValue).sum();
      long now = System.currentTimeMillis();
      long read = 0;
      long valid = 0;
      long start = System.nanoTime();
      while (read < total) {
        ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(200));
        for (ConsumerRecord<byte[], byte[]> record : records) {
          read++;
          if (decode && ClickEventCodec.decode(record.value(), now) instanceof Decoded.Valid) {
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

  /**
   * Runs the click job as {@code ./tally up} does (RocksDB, incremental checkpoints every 10 s, parallelism
   * 2) from the earliest offset, and measures how fast the dedup operator takes in the whole topic.
   */
  public void streamingJob() throws Exception {
    try (Connection c = stack.connect(); Statement s = c.createStatement()) {
      s.execute("TRUNCATE click_counts");
    }
    Path work = stack.dir().resolve("flink");
    Files.createDirectories(work.resolve("tmp"));
    int restPort = Ports.ephemeral();
    ClickJobOptions options = ClickJobOptions.parse(
        "--bootstrap-servers", stack.bootstrapServers(),
        "--topic", TOPIC,
        "--dlq-topic", DLQ_TOPIC,
        "--group-id", "bench-click-job",
        "--jdbc-url", stack.jdbcUrl(),
        "--jdbc-user", stack.dbUser(),
        "--jdbc-password", "",
        "--checkpoint-dir", work.resolve("checkpoints").toUri().toString(),
        "--parallelism", String.valueOf(settings.parallelism()),
        "--idle-timeout", settings.idleTimeout().toMillis() + "ms");
    Configuration conf = ClickCountJob.configuration(options);
    conf.set(RestOptions.PORT, restPort);
    conf.set(RestOptions.ADDRESS, "localhost");
    conf.setString("rest.bind-address", "localhost");
    conf.setString("taskmanager.numberOfTaskSlots", String.valueOf(settings.parallelism()));
    conf.setString("io.tmp.dirs", work.resolve("tmp").toString());
    conf.setString("web.tmpdir", work.resolve("tmp").toString());
    // The REST API serves metrics cached by a fetcher; refresh them every second instead of every 10.
    conf.setString("metrics.fetcher.update-interval", "1000");
    settings.flinkConf().forEach(conf::setString);

    StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironmentWithWebUI(conf);
    ClickCountJob.build(env, options);
    long submitted = System.nanoTime();
    JobClient job = env.executeAsync(ClickCountJob.JOB_NAME);
    String jobId = job.getJobID().toHexString();
    FlinkRest rest = new FlinkRest(restPort);
    try {
      String dedup = awaitVertex(rest, jobId);
      // Sample the dedup operator's input count until it has seen every event.
      List<long[]> samples = new ArrayList<>();
      CpuMeter.Snapshot cpuAt10 = null;
      CpuMeter.Snapshot cpuAt90 = null;
      List<String> midRunLoad = null;
      long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(20);
      long last = -1;
      while (true) {
        Optional<Double> in = rest.vertexMetricSum(jobId, dedup, "numRecordsIn");
        long now = System.nanoTime();
        if (in.isPresent() && in.get().longValue() != last) {
          last = in.get().longValue();
          samples.add(new long[] {now, last});
          if (cpuAt10 == null && last >= truth.events() / 10) {
            cpuAt10 = cpu.snapshot();
          }
          if (cpuAt90 == null && last >= truth.events() * 9 / 10) {
            cpuAt90 = cpu.snapshot();
          }
          if (midRunLoad == null && last >= truth.events() / 2) {
            midRunLoad = subtaskLoad(rest, jobId, dedup);
          }
          LOG.info("dedup numRecordsIn {}", last);
        }
        if (last >= truth.events()) {
          break;
        }
        if (now > deadline) {
          throw new IllegalStateException("the job took in " + last + " of " + truth.events() + " events in 20 minutes");
        }
        Thread.sleep(250);
      }
      long consumedAt = samples.get(samples.size() - 1)[0];
      double sustained = rate(samples, truth.events() / 10, truth.events() * 9 / 10);
      double endToEnd = truth.events() / ((consumedAt - submitted) / 1e9);

      // Then clicks happening now, as in normal operation: they move every partition's watermark past the
      // backlog's last minutes, and time how long a minute takes to be counted once it is over.
      LiveClicks live = settings.lagDuration().isZero() ? null
          : new LiveClicks(stack.bootstrapServers(), TOPIC, LIVE_CLICKS_PER_SECOND, LIVE_CODES, settings.seed());
      // Counts are complete once every window has fired: the last ones close when the watermark passes
      // them, pushed by live clicks or, without them, once partitions that replayed old clicks have been
      // quiet for the stale idle timeout.
      Duration closeAfter = live != null ? settings.idleTimeout()
          : settings.idleTimeout().multipliedBy(WallClockWatermarks.STALE_IDLE_FACTOR);
      long[] totals = awaitCounts(Duration.ofMinutes(2).plus(closeAfter));
      double countsSeconds = (System.nanoTime() - submitted) / 1e9;
      Map<Long, Double> lags = new TreeMap<>();
      long liveClicks = 0;
      if (live != null) {
        try {
          lags = measureLag(live, settings.lagDuration());
        } finally {
          live.close();
        }
        liveClicks = live.perMinute().values().stream().mapToLong(AtomicLong::get).sum();
      }
      JsonNode checkpoint = awaitCheckpointAfter(rest, jobId, System.currentTimeMillis(), Duration.ofSeconds(60));
      JsonNode summary = rest.checkpoints(jobId);
      long dedupState = checkpoint == null ? -1
          : rest.checkpointDetails(jobId, checkpoint.path("id").asLong()).path("tasks").path(dedup).path("state_size").asLong(-1);
      long dlq = endOffsets(DLQ_TOPIC);
      CpuMeter.Usage usage = cpuAt10 != null && cpuAt90 != null ? cpu.between(cpuAt10, cpuAt90) : null;

      Table t = new Table("bench pipeline: the streaming click job (Kafka → parse → dedup → 1-min windows → PostgreSQL)",
          "figure", "value");
      t.row("sustained events/s (10% → 90% of the topic, dedup input)", fmt(sustained, 0));
      t.row("events/s from submission until all consumed (start-up included)", fmt(endToEnd, 0));
      t.row("ratio to the plain consumer, count only (" + fmt(rawCountRate, 0) + "/s)", fmt(sustained / rawCountRate, 3));
      t.row("ratio to the plain consumer + decode (" + fmt(rawDecodeRate, 0) + "/s)", fmt(sustained / rawDecodeRate, 3));
      t.row("seconds from submission to all events consumed", fmt((consumedAt - submitted) / 1e9, 1));
      t.row("seconds from submission to exact counts in PostgreSQL", fmt(countsSeconds, 1));
      t.row("CPU while sustained: machine busy / JVM / PostgreSQL (cores)", usage == null ? "–"
          : fmt(usage.machineBusy(), 2) + " / " + fmt(usage.jvm(), 2) + " / " + fmt(usage.postgres(), 2));
      if (midRunLoad != null) {
        t.row("mid-run, dedup input per subtask: min / max (max ÷ mean)", midRunLoad.get(0));
        t.row("mid-run, busy ms/s per subtask (avg / max): sources; dedup + window", midRunLoad.get(1));
        t.row("mid-run, backpressured ms/s per subtask (avg / max): sources", midRunLoad.get(2));
      }
      t.row("click_counts: clicks + bot_clicks (expected " + count(truth.distinct()) + ")", count(totals[0] + totals[1]));
      t.row("click_counts: bot_clicks (expected " + count(truth.distinctBots()) + ")", count(totals[1]));
      t.row("click_counts: rows (expected " + count(truth.rows()) + ")", count(totals[2]));
      t.row("dead letters (late or malformed; none expected)", count(dlq));
      t.row("job settings", "parallelism " + settings.parallelism() + ", RocksDB, checkpoints every "
          + options.checkpointInterval().toSeconds() + " s, idle timeout " + settings.idleTimeout().toSeconds() + " s"
          + (settings.flinkConf().isEmpty() ? "" : ", " + settings.flinkConf()));
      t.row("checkpoints completed / failed", summary.path("counts").path("completed").asLong() + " / "
          + summary.path("counts").path("failed").asLong());
      t.row("checkpoint duration avg / max (ms)", summary.path("summary").path("end_to_end_duration").path("avg").asLong()
          + " / " + summary.path("summary").path("end_to_end_duration").path("max").asLong());
      t.row("checkpointed (incremental) size avg / max (MiB)",
          mib(summary.path("summary").path("checkpointed_size").path("avg").asLong()) + " / "
              + mib(summary.path("summary").path("checkpointed_size").path("max").asLong()));
      if (checkpoint != null) {
        t.row("full state size, checkpoint " + checkpoint.path("id").asLong() + " after the last event (MiB)",
            mib(checkpoint.path("state_size").asLong()));
        t.row("  of it the dedup + window vertex (MiB)", mib(dedupState));
        t.row("dedup state bytes per remembered click id", fmt(dedupState / (double) (truth.distinct() + liveClicks), 1));
      }
      if (live != null) {
        t.row("live clicks afterwards (" + LIVE_CLICKS_PER_SECOND + "/s over " + LIVE_CODES + " codes, stamped now)",
            count(liveClicks));
        t.row("lag: seconds from a minute's end to its complete count in PostgreSQL", lags.isEmpty() ? "no minute closed"
            : lags.values().stream().map(v -> fmt(v, 1)).collect(java.util.stream.Collectors.joining(", ")));
        t.row("click to visible in click_counts, p50 / p99 / max (s; " + clickToVisible.getTotalCount() + " samples)",
            fmt(Histograms.ms(clickToVisible, 50) / 1000, 2) + " / " + fmt(Histograms.ms(clickToVisible, 99) / 1000, 2)
                + " / " + fmt(Histograms.maxMs(clickToVisible) / 1000, 2));
      }
      t.note("Dedup input = numRecordsIn of the \"" + DEDUP_VERTEX + "\" vertex (summed over subtasks) from Flink's REST"
          + " API, sampled as it changes (refreshed every second). The job has every event when it reaches the topic's size"
          + " (nothing is malformed). The checkpoint taken after the counts were complete holds the whole dedup set and"
          + " no open window, so its state size over the distinct click ids (backlog and live) is the per-id cost (an"
          + " upper bound: RocksDB files not yet compacted count too). Lag: for each minute that ended while live clicks"
          + " flowed, when click_counts first held all of that minute's live clicks.");
      t.print(out);

      boolean exact = totals[0] + totals[1] == truth.distinct() && totals[1] == truth.distinctBots() && totals[2] == truth.rows();
      lags.values().stream().mapToDouble(Double::doubleValue).max().ifPresent(max -> report.target(
          "pipeline: lag from a minute's end to its count (no figure in the issue)", fmt(max, 1) + " s at most", true,
          "live clicks after the backlog"));
      if (clickToVisible.getTotalCount() > 0) {
        double p99 = Histograms.ms(clickToVisible, 99) / 1000;
        report.target("pipeline: a click visible within 5 s (p99)", fmt(p99, 2) + " s", p99 <= 5,
            LIVE_CLICKS_PER_SECOND + " live clicks/s; p50 " + fmt(Histograms.ms(clickToVisible, 50) / 1000, 2) + " s");
      }
      report.ratio("pipeline.job/raw-consumer", "events_per_s", sustained / rawCountRate);
      report.ratio("pipeline.job/raw-consumer+decode", "events_per_s", sustained / rawDecodeRate);
      report.target("pipeline: ≥ 100,000 events/s", fmt(sustained, 0) + " events/s", sustained >= 100_000, "");
      report.target("pipeline: ≥ 0.2× the plain consumer", fmt(sustained / rawCountRate, 3) + "×",
          sustained / rawCountRate >= 0.2, "consumer counting only, " + fmt(rawCountRate, 0) + "/s");
      report.target("pipeline: counts exact", exact ? "exact" : "OFF: " + (totals[0] + totals[1]) + " vs " + truth.distinct(),
          exact, "sum, bot sum and rows of click_counts vs the generated truth");
    } finally {
      job.cancel().get(60, TimeUnit.SECONDS);
      try {
        job.getJobExecutionResult().get(60, TimeUnit.SECONDS);
      } catch (Exception expected) {
        // a cancelled job ends exceptionally
      }
    }
  }

  private static String awaitVertex(FlinkRest rest, String jobId) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (true) {
      try {
        return rest.vertexId(jobId, DEDUP_VERTEX);
      } catch (RuntimeException e) {
        if (System.nanoTime() > deadline) {
          throw e;
        }
        Thread.sleep(200);
      }
    }
  }

  /**
   * Polls the live codes' counts for {@code duration}; returns, per minute that ended meanwhile, the
   * seconds from its end until its count in PostgreSQL was complete.
   */
  private Map<Long, Double> measureLag(LiveClicks live, Duration duration) throws Exception {
    Map<Long, Double> lags = new TreeMap<>();
    long startedAt = System.currentTimeMillis();
    long end = startedAt + duration.toMillis();
    List<long[]> visible = new ArrayList<>();
    try (Connection c = stack.connect(); Statement s = c.createStatement()) {
      while (System.currentTimeMillis() < end) {
        try (ResultSet rs = s.executeQuery("SELECT (extract(epoch from minute) * 1000)::bigint, sum(clicks + bot_clicks)"
            + " FROM click_counts WHERE code LIKE '" + LiveClicks.CODE_PREFIX + "%' GROUP BY minute")) {
          long now = System.currentTimeMillis();
          long total = 0;
          while (rs.next()) {
            total += rs.getLong(2);
            long minute = rs.getLong(1);
            AtomicLong sent = live.perMinute().get(minute);
            // Only minutes that end while watched: an earlier one's completion time is not known.
            if (minute + 60_000 >= startedAt && sent != null && rs.getLong(2) == sent.get() && minute + 60_000 <= now
                && !lags.containsKey(minute)) {
              lags.put(minute, (now - (minute + 60_000)) / 1000.0);
            }
          }
          visible.add(new long[] {now, total});
        }
        Thread.sleep(100);
      }
    }
    clickToVisible = clickToVisible(live.sentBy(), visible, startedAt, end - CLICK_TO_VISIBLE_MARGIN.toMillis());
    return lags;
  }

  /** Nothing sent in the last this-long of the live phase is timed: it may not have had time to show. */
  private static final Duration CLICK_TO_VISIBLE_MARGIN = Duration.ofSeconds(15);

  /** Click-to-visible latencies of the last live phase, in nanoseconds. */
  private Histogram clickToVisible = Histograms.newHistogram();

  /**
   * For each moment clicks left, how long until PostgreSQL held that many live clicks: the time from a
   * click to its count being readable by the stats API, with the job's early firings. Counts grow in the
   * order clicks were sent only roughly (partitions run independently), so this is the time until as
   * many clicks as had been sent are visible.
   */
  private static Histogram clickToVisible(List<long[]> sentBy, List<long[]> visible, long from, long until) {
    Histogram histogram = Histograms.newHistogram();
    int v = 0;
    for (long[] sent : sentBy) {
      if (sent[0] < from || sent[0] > until || sent[1] == 0) {
        continue;
      }
      while (v < visible.size() && (visible.get(v)[0] < sent[0] || visible.get(v)[1] < sent[1])) {
        v++;
      }
      if (v == visible.size()) {
        break;
      }
      Histograms.record(histogram, TimeUnit.MILLISECONDS.toNanos(visible.get(v)[0] - sent[0]));
    }
    return histogram;
  }

  /**
   * How the load falls on the subtasks, from Flink's REST API halfway through the backlog: the dedup
   * input per subtask (Zipf keys make it uneven), and how busy and how backpressured the tasks are. The
   * same figures the web UI shows; "–" where the metric fetcher has none yet.
   */
  private static List<String> subtaskLoad(FlinkRest rest, String jobId, String dedup) {
    String source = rest.vertexId(jobId, "Click topic");
    String skew = rest.vertexMetricSpread(jobId, dedup, "numRecordsIn")
        .map(v -> fmt(v.path("min").asDouble(), 0) + " / " + fmt(v.path("max").asDouble(), 0) + " ("
            + fmt(v.path("max").asDouble() / v.path("avg").asDouble(), 2) + ")")
        .orElse("–");
    String busy = avgAndMax(rest.vertexMetricSpread(jobId, source, "busyTimeMsPerSecond")) + "; "
        + avgAndMax(rest.vertexMetricSpread(jobId, dedup, "busyTimeMsPerSecond"));
    String backpressured = avgAndMax(rest.vertexMetricSpread(jobId, source, "backPressuredTimeMsPerSecond"));
    return List.of(skew, busy, backpressured);
  }

  private static String avgAndMax(Optional<JsonNode> spread) {
    return spread.map(v -> fmt(v.path("avg").asDouble(), 0) + " / " + fmt(v.path("max").asDouble(), 0)).orElse("–");
  }

  /** Events per second between the first samples at or above {@code low} and {@code high}. */
  private static double rate(List<long[]> samples, long low, long high) {
    long[] a = samples.stream().filter(s -> s[1] >= low).findFirst().orElse(samples.get(0));
    long[] b = samples.stream().filter(s -> s[1] >= high).findFirst().orElse(samples.get(samples.size() - 1));
    if (b[0] == a[0]) {
      return Double.NaN;
    }
    return (b[1] - a[1]) / ((b[0] - a[0]) / 1e9);
  }

  /** Waits until click_counts adds up to the distinct clicks; returns clicks, bot clicks and rows. */
  private long[] awaitCounts(Duration patience) throws Exception {
    long deadline = System.nanoTime() + patience.toNanos();
    long[] totals;
    do {
      Thread.sleep(500);
      try (Connection c = stack.connect(); Statement s = c.createStatement();
          ResultSet rs = s.executeQuery("SELECT coalesce(sum(clicks), 0), coalesce(sum(bot_clicks), 0), count(*) FROM click_counts WHERE code LIKE 'L%'")) {
        rs.next();
        totals = new long[] {rs.getLong(1), rs.getLong(2), rs.getLong(3)};
      }
    } while (totals[0] + totals[1] < truth.distinct() && System.nanoTime() < deadline);
    // A moment more: an extra (wrong) row would show up now rather than never.
    Thread.sleep(2000);
    try (Connection c = stack.connect(); Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT coalesce(sum(clicks), 0), coalesce(sum(bot_clicks), 0), count(*) FROM click_counts WHERE code LIKE 'L%'")) {
      rs.next();
      return new long[] {rs.getLong(1), rs.getLong(2), rs.getLong(3)};
    }
  }

  private static JsonNode awaitCheckpointAfter(FlinkRest rest, String jobId, long epochMillis, Duration patience)
      throws InterruptedException {
    long deadline = System.nanoTime() + patience.toNanos();
    while (System.nanoTime() < deadline) {
      JsonNode latest = rest.checkpoints(jobId).path("latest").path("completed");
      if (!latest.isMissingNode() && !latest.isNull() && latest.path("trigger_timestamp").asLong() > epochMillis) {
        return latest;
      }
      Thread.sleep(500);
    }
    return null;
  }

  private long endOffsets(String topic) {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, stack.bootstrapServers());
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
    try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p)) {
      List<TopicPartition> partitions = consumer.partitionsFor(topic).stream()
          .map(i -> new TopicPartition(topic, i.partition())).toList();
      return consumer.endOffsets(partitions).values().stream().mapToLong(Long::longValue).sum();
    }
  }

  /**
   * Runs the reconciliation job over the whole data set's time range (on a MiniCluster of its own, as
   * {@code ./tally reconcile} does) and compares its replay rate with the plain consumer's.
   */
  public void reconcile() throws Exception {
    Path tmp = stack.dir().resolve("flink-reconcile-tmp");
    Files.createDirectories(tmp);
    Configuration conf = new Configuration();
    conf.setString("io.tmp.dirs", tmp.toString());
    conf.setString("taskmanager.numberOfTaskSlots", String.valueOf(settings.parallelism()));
    settings.flinkConf().forEach(conf::setString);
    StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(settings.parallelism(), conf);
    AtomicLong netRuntime = new AtomicLong(-1);
    AtomicReference<CpuMeter.Snapshot> cpuAtSubmission = new AtomicReference<>();
    AtomicReference<CpuMeter.Snapshot> cpuAtEnd = new AtomicReference<>();
    env.registerJobListener(new JobListener() {
      @Override
      public void onJobSubmitted(JobClient jobClient, Throwable throwable) {
        cpuAtSubmission.set(cpu.snapshot());
      }

      @Override
      public void onJobExecuted(JobExecutionResult result, Throwable throwable) {
        cpuAtEnd.set(cpu.snapshot());
        if (result != null) {
          netRuntime.set(result.getNetRuntime());
        }
      }
    });
    ReconcileOptions options = ReconcileOptions.parse(
        "--from", truth.from().toString(),
        "--to", truth.to().plus(Duration.ofMinutes(1)).toString(),
        "--bootstrap-servers", stack.bootstrapServers(),
        "--topic", TOPIC,
        "--jdbc-url", stack.jdbcUrl(),
        "--jdbc-user", stack.dbUser(),
        "--jdbc-password", "",
        "--parallelism", String.valueOf(settings.parallelism()));
    long start = System.nanoTime();
    ReconcileReport result = ReconcileJob.run(env, options, Instant.now());
    double wall = (System.nanoTime() - start) / 1e9;
    double job = netRuntime.get() / 1000.0;
    double replay = result.eventsRead() / job;

    Table t = new Table("bench reconcile: batch-reconcile replaying the topic (Flink BATCH mode)", "figure", "value");
    t.row("events read (expected " + count(truth.events()) + ")", count(result.eventsRead()));
    t.row("distinct clicks (expected " + count(truth.distinct()) + ")", count(result.distinctClicks()));
    t.row("duplicates (expected " + count(truth.duplicates()) + ")", count(result.duplicates()));
    t.row("minutes checked / differing", count(result.minutesChecked()) + " / " + count(result.minutesDiffering()));
    t.row("clicks changed by the repair (+ / −)", count(result.clicksAdded()) + " / " + count(result.clicksRemoved()));
    t.row("job net runtime (s)", fmt(job, 1));
    t.row("replay events/s (events read / job net runtime)", fmt(replay, 0));
    t.row("whole run incl. start-up, compare and repair (s)", fmt(wall, 1));
    if (cpuAtSubmission.get() != null && cpuAtEnd.get() != null) {
      // CPU time per event moves far less than the rate when other work on the machine takes cores away.
      // PostgreSQL's share is left out: the sink's backends start and exit within the job, taking their CPU
      // time with them before the second snapshot.
      CpuMeter.Usage usage = cpu.between(cpuAtSubmission.get(), cpuAtEnd.get());
      t.row("CPU during the job: machine busy / this JVM (cores)", fmt(usage.machineBusy(), 2) + " / " + fmt(usage.jvm(), 2));
      t.row("JVM CPU per event read (µs; broker and start-up included)",
          fmt(usage.jvm() * usage.seconds() * 1e6 / result.eventsRead(), 1));
    }
    t.row("job settings", "BATCH mode, parallelism " + settings.parallelism() + ", " + settings.flinkConf());
    t.row("ratio to the plain consumer, count only (" + fmt(rawCountRate, 0) + "/s)", fmt(replay / rawCountRate, 3));
    t.row("ratio to the plain consumer + decode (" + fmt(rawDecodeRate, 0) + "/s)", fmt(replay / rawDecodeRate, 3));
    t.note("Run after bench pipeline (as in `bench all`) the counts are already exact, so no minute should differ;"
        + " run alone, every minute is missing and the repair writes them all.");
    t.print(out);
    report.ratio("reconcile/decoding_consumer", "throughput", replay / rawDecodeRate);
    report.target("reconcile: replay ≥ 0.4× the decoding consumer", fmt(replay / rawDecodeRate, 3) + "×",
        replay / rawDecodeRate >= 0.4, fmt(replay, 0) + " events/s against " + fmt(rawDecodeRate, 0) + "/s");
  }

  private static String mib(long bytes) {
    return bytes < 0 ? "–" : fmt(bytes / 1024.0 / 1024.0, 1);
  }

}
