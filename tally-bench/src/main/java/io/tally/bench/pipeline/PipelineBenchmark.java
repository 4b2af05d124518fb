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
  private static final String VISITORS_VERTEX = "Mark new visitors";

  /** What to run. */
  public record Settings(int events, int codes, double duplicates, Duration span, int rawRuns, int parallelism,
                         Duration idleTimeout, Duration lagDuration, Map<String, String> flinkConf, long seed,
                         int hotEvents, List<Integer> extraParallelisms) {}

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
    bench.truth = bench.preload(TOPIC, settings.events(), settings.codes(), "Zipf(s=1) over " + settings.codes() + " links");
    bench.rawConsumer();
    return bench;
  }

  /** Writes a data set into a fresh topic with a producer tuned for bulk loading. */
  private ClickDataset.Truth preload(String topic, int events, int codes, String workload) {
    stack.createTopic(topic, PARTITIONS);
    if (topic.equals(TOPIC)) {
      stack.createTopic(DLQ_TOPIC, 1);
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
      truth = ClickDataset.write(producer, topic, events, codes, settings.duplicates(), from, settings.span(), settings.seed());
      producer.flush();
    }
    double seconds = (System.nanoTime() - start) / 1e9;
    Table t = new Table("Preloaded click topic: " + workload, "events", "distinct clicks", "duplicates", "bot clicks", "(code, minute) rows",
        "avg event bytes", "event time", "preload events/s");
    t.row(count(truth.events()), count(truth.distinct()), count(truth.duplicates()), count(truth.distinctBots()),
        count(truth.rows()), fmt(truth.bytes() / (double) truth.events(), 0), truth.from() + " .. " + truth.to(),
        fmt(truth.events() / seconds, 0));
    t.note("Topic " + topic + ", " + PARTITIONS + " partitions, records as redirect-web writes them (ClickRecords), "
        + workload + ", seed " + settings.seed() + "; one producer, acks=all, lz4, linger 20 ms, 512 KiB batches.");
    t.print(out);
    return truth;
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
      long read = 0;
      long valid = 0;
      long start = System.nanoTime();
      while (read < total) {
        ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(200));
        for (ConsumerRecord<byte[], byte[]> record : records) {
          read++;
          if (decode && ClickEventCodec.decode(record.value(), record.timestamp()) instanceof Decoded.Valid) {
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
   * The click job on the Zipf topic as {@code ./tally up} runs it (RocksDB, incremental checkpoints every
   * 10 s), then every link's clicks on one link (the hot workload), then the Zipf topic again at each extra
   * parallelism: throughput, exactness, the load of each keyed operator per subtask, and state and
   * checkpoints as the remembered click ids grow.
   */
  public void streamingJob() throws Exception {
    JobRun zipf = runJob(new JobPlan("zipf", TOPIC, truth, settings.parallelism(), settings.lagDuration(), true));
    JobRun hot = null;
    if (settings.hotEvents() > 0) {
      String hotTopic = TOPIC + "-hot";
      ClickDataset.Truth hotTruth = preload(hotTopic, settings.hotEvents(), 1, "every click on one link");
      hot = runJob(new JobPlan("hot", hotTopic, hotTruth, settings.parallelism(), Duration.ZERO, false));
    }
    List<JobRun> curve = new ArrayList<>(List.of(zipf));
    for (int parallelism : settings.extraParallelisms()) {
      curve.add(runJob(new JobPlan("zipf", TOPIC, truth, parallelism, Duration.ZERO, false).throughputOnly()));
    }

    report.ratio("pipeline.events_per_s", "value", zipf.sustained);
    report.ratio("pipeline/decoding_consumer", "throughput", zipf.sustained / rawDecodeRate);
    report.target("pipeline: ≥ 100,000 events/s", fmt(zipf.sustained, 0) + " events/s", zipf.sustained >= 100_000,
        "Zipf, parallelism " + settings.parallelism());
    report.target("pipeline: ≥ 0.2× the decoding consumer", fmt(zipf.sustained / rawDecodeRate, 3) + "×",
        zipf.sustained / rawDecodeRate >= 0.2, "consumer + decode " + fmt(rawDecodeRate, 0) + "/s");
    if (hot != null) {
      report.ratio("pipeline.hot.subtask_skew", "records_in", hot.keyedSkew);
      report.ratio("pipeline.hot/zipf", "throughput", hot.sustained / zipf.sustained);
      report.target("pipeline: hot-link load skew ≤ 1.2 (max ÷ mean keyed records in per subtask)", fmt(hot.keyedSkew, 3),
          hot.keyedSkew <= 1.2, "parallelism " + settings.parallelism() + "; per operator in the hot table");
    }
    if (curve.size() > 1) {
      Table t = new Table("Pipeline throughput against parallelism (Zipf topic, same run)", "parallelism", "sustained events/s",
          "÷ parallelism " + settings.parallelism(), "busy ms/s per subtask, parse (avg)", "busy ms/s per subtask, dedup (avg)");
      for (JobRun run : curve) {
        t.row(run.plan.parallelism(), fmt(run.sustained, 0), fmt(run.sustained / zipf.sustained, 3), run.parseBusy, run.dedupBusy);
      }
      t.note("Runs at other parallelisms read the same topic and stop at " + (int) (THROUGHPUT_ONLY_SHARE * 100)
          + "% of it (their rate is 10% → " + (int) (THROUGHPUT_ONLY_SHARE * 100) + "%). All share the machine's 2 cores"
          + " with Kafka and PostgreSQL, so parallelism 2 cannot double parallelism 1 here.");
      t.print(out);
      JobRun single = curve.stream().filter(r -> r.plan.parallelism() == 1).findFirst().orElse(null);
      if (single != null && settings.parallelism() == 2) {
        report.ratio("pipeline.parallelism_2/1", "throughput", zipf.sustained / single.sustained);
      }
    }
  }

  /** One run of the click job: which data, at which parallelism, what to measure. */
  record JobPlan(String workload, String topic, ClickDataset.Truth truth, int parallelism, Duration lag, boolean stateCurve,
                 boolean countsToo) {
    JobPlan(String workload, String topic, ClickDataset.Truth truth, int parallelism, Duration lag, boolean stateCurve) {
      this(workload, topic, truth, parallelism, lag, stateCurve, true);
    }

    JobPlan throughputOnly() {
      return new JobPlan(workload, topic, truth, parallelism, Duration.ZERO, false, false);
    }
  }

  /** What a run measured. */
  static final class JobRun {
    final JobPlan plan;
    double sustained;
    double keyedSkew = Double.NaN;
    String parseBusy = "–";
    String dedupBusy = "–";

    JobRun(JobPlan plan) {
      this.plan = plan;
    }
  }

  /** A run that measures throughput only stops reading here. */
  private static final double THROUGHPUT_ONLY_SHARE = 0.5;

  private JobRun runJob(JobPlan plan) throws Exception {
    try (Connection c = stack.connect(); Statement s = c.createStatement()) {
      s.execute("TRUNCATE click_counts, click_hourly, click_daily, click_dimensions_hourly");
    }
    ClickDataset.Truth data = plan.truth();
    JobRun run = new JobRun(plan);
    clickToVisible = Histograms.newHistogram();
    String name = plan.workload() + "-p" + plan.parallelism();
    Path work = stack.dir().resolve("flink-" + name);
    Files.createDirectories(work.resolve("tmp"));
    int restPort = Ports.ephemeral();
    ClickJobOptions options = ClickJobOptions.parse(
        "--bootstrap-servers", stack.bootstrapServers(),
        "--topic", plan.topic(),
        "--dlq-topic", DLQ_TOPIC,
        "--group-id", "bench-click-job-" + name,
        "--jdbc-url", stack.jdbcUrl(),
        "--jdbc-user", stack.dbUser(),
        "--jdbc-password", "",
        "--checkpoint-dir", work.resolve("checkpoints").toUri().toString(),
        "--parallelism", String.valueOf(plan.parallelism()),
        "--idle-timeout", settings.idleTimeout().toMillis() + "ms");
    Configuration conf = ClickCountJob.configuration(options);
    conf.set(RestOptions.PORT, restPort);
    conf.set(RestOptions.ADDRESS, "localhost");
    conf.setString("rest.bind-address", "localhost");
    conf.setString("taskmanager.numberOfTaskSlots", String.valueOf(plan.parallelism()));
    conf.setString("io.tmp.dirs", work.resolve("tmp").toString());
    conf.setString("web.tmpdir", work.resolve("tmp").toString());
    // The REST API serves metrics cached by a fetcher; refresh them every second instead of every 10.
    conf.setString("metrics.fetcher.update-interval", "1000");
    settings.flinkConf().forEach(conf::setString);

    long dlqBefore = endOffsets(DLQ_TOPIC);
    StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironmentWithWebUI(conf);
    ClickCountJob.build(env, options);
    long submitted = System.nanoTime();
    JobClient job = env.executeAsync(ClickCountJob.JOB_NAME);
    String jobId = job.getJobID().toHexString();
    FlinkRest rest = new FlinkRest(restPort);
    try {
      String dedup = awaitVertex(rest, jobId);
      long readUpTo = plan.countsToo() ? data.events() : (long) (data.events() * THROUGHPUT_ONLY_SHARE);
      // Sample the dedup operator's input count until it has seen every event.
      List<long[]> samples = new ArrayList<>();
      StateCurve stateCurve = plan.stateCurve() ? new StateCurve(rest, jobId, dedup, data, samples) : null;
      CpuMeter.Snapshot cpuAt10 = null;
      CpuMeter.Snapshot cpuAtEnd = null;
      List<String> midRunLoad = null;
      long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(20);
      long last = -1;
      while (true) {
        Optional<Double> in = rest.vertexMetricSum(jobId, dedup, "numRecordsIn");
        long now = System.nanoTime();
        if (in.isPresent() && in.get().longValue() != last) {
          last = in.get().longValue();
          samples.add(new long[] {now, last, System.currentTimeMillis()});
          if (cpuAt10 == null && last >= data.events() / 10) {
            cpuAt10 = cpu.snapshot();
          }
          if (cpuAtEnd == null && last >= readUpTo * 9 / 10) {
            cpuAtEnd = cpu.snapshot();
          }
          if (midRunLoad == null && last >= readUpTo / 2) {
            midRunLoad = subtaskLoad(rest, jobId, dedup);
            run.parseBusy = avgOnly(rest.vertexMetricSpread(jobId, rest.vertexId(jobId, "Click topic"), "busyTimeMsPerSecond"));
            run.dedupBusy = avgOnly(rest.vertexMetricSpread(jobId, dedup, "busyTimeMsPerSecond"));
          }
          LOG.info("{}: dedup numRecordsIn {}", name, last);
        }
        if (stateCurve != null) {
          stateCurve.poll();
        }
        if (last >= readUpTo) {
          break;
        }
        if (now > deadline) {
          throw new IllegalStateException("the job took in " + last + " of " + data.events() + " events in 20 minutes");
        }
        Thread.sleep(250);
      }
      long consumedAt = samples.get(samples.size() - 1)[0];
      run.sustained = rate(samples, data.events() / 10, readUpTo * 9 / 10);
      if (!plan.countsToo()) {
        out.printf(Locale.ROOT, "%n%s at parallelism %d: %s events/s sustained (10%% → %d%% of the topic)%n", plan.workload(),
            plan.parallelism(), fmt(run.sustained, 0), (int) (THROUGHPUT_ONLY_SHARE * 100));
        return run;
      }
      List<KeyedLoad> keyedLoad = keyedLoad(rest, jobId);
      run.keyedSkew = KeyedLoad.skewOfTotal(keyedLoad);
      double endToEnd = data.events() / ((consumedAt - submitted) / 1e9);

      // Then clicks happening now, as in normal operation: they move every partition's watermark past the
      // backlog's last minutes (so its counts complete), and time how long a minute takes to be counted.
      LiveClicks live = new LiveClicks(stack.bootstrapServers(), plan.topic(), LIVE_CLICKS_PER_SECOND, LIVE_CODES, settings.seed());
      long[] totals;
      Map<Long, Double> lags = new TreeMap<>();
      long liveClicks;
      double countsSeconds;
      try {
        totals = awaitCounts(data, Duration.ofMinutes(2).plus(settings.idleTimeout()));
        countsSeconds = (System.nanoTime() - submitted) / 1e9;
        if (!plan.lag().isZero()) {
          lags = measureLag(live, plan.lag());
        }
      } finally {
        live.close();
      }
      liveClicks = live.perMinute().values().stream().mapToLong(AtomicLong::get).sum();
      JsonNode checkpoint = awaitCheckpointAfter(rest, jobId, System.currentTimeMillis(), Duration.ofSeconds(60));
      JsonNode summary = rest.checkpoints(jobId);
      JsonNode checkpointTasks = checkpoint == null ? null
          : rest.checkpointDetails(jobId, checkpoint.path("id").asLong()).path("tasks");
      long dedupState = checkpointTasks == null ? -1 : checkpointTasks.path(dedup).path("state_size").asLong(-1);
      long visitorState = checkpointTasks == null ? -1
          : checkpointTasks.path(rest.vertexId(jobId, VISITORS_VERTEX)).path("state_size").asLong(-1);
      long dlq = endOffsets(DLQ_TOPIC) - dlqBefore;
      CpuMeter.Usage usage = cpuAt10 != null && cpuAtEnd != null ? cpu.between(cpuAt10, cpuAtEnd) : null;

      Table t = new Table("bench pipeline, " + plan.workload() + " workload: the streaming click job (Kafka → parse → dedup"
          + " by click id → visitor marks by (link, visitor) → partial minutes per subtask → 1-min windows and roll-ups → PostgreSQL)",
          "figure", "value");
      t.row("sustained events/s (10% → 90% of the topic, dedup input)", fmt(run.sustained, 0));
      t.row("events/s from submission until all consumed (start-up included)", fmt(endToEnd, 0));
      t.row("ratio to the plain consumer, count only (" + fmt(rawCountRate, 0) + "/s)", fmt(run.sustained / rawCountRate, 3));
      t.row("ratio to the plain consumer + decode (" + fmt(rawDecodeRate, 0) + "/s)", fmt(run.sustained / rawDecodeRate, 3));
      t.row("seconds from submission to all events consumed", fmt((consumedAt - submitted) / 1e9, 1));
      t.row("seconds from submission to exact counts in PostgreSQL", fmt(countsSeconds, 1));
      t.row("CPU while sustained: machine busy / JVM / PostgreSQL (cores)", usage == null ? "–"
          : fmt(usage.machineBusy(), 2) + " / " + fmt(usage.jvm(), 2) + " / " + fmt(usage.postgres(), 2));
      if (midRunLoad != null) {
        t.row("mid-run, dedup input per subtask: min / max (max ÷ mean)", midRunLoad.get(0));
        t.row("mid-run, busy ms/s per subtask (avg / max): sources; dedup chain", midRunLoad.get(1));
        t.row("mid-run, backpressured ms/s per subtask (avg / max): sources", midRunLoad.get(2));
        t.row("mid-run, busy / backpressured ms/s per task (avg over subtasks)", midRunLoad.get(3));
      }
      for (KeyedLoad load : keyedLoad) {
        t.row("records in per subtask, " + load.vertex() + " (max ÷ mean)", load.describe());
      }
      t.row("keyed records in per subtask, all keyed operators (max ÷ mean)", fmt(run.keyedSkew, 3));
      t.row("click_counts: clicks + bot_clicks (expected " + count(data.distinct()) + ")", count(totals[0] + totals[1]));
      t.row("click_counts: bot_clicks (expected " + count(data.distinctBots()) + ")", count(totals[1]));
      t.row("click_counts: rows (expected " + count(data.rows()) + ")", count(totals[2]));
      t.row("dead letters (late or malformed; none expected)", count(dlq));
      t.row("job settings", "parallelism " + plan.parallelism() + ", RocksDB, checkpoints every "
          + options.checkpointInterval().toSeconds() + " s, idle timeout " + settings.idleTimeout().toSeconds() + " s"
          + (settings.flinkConf().isEmpty() ? "" : ", " + settings.flinkConf()));
      t.row("checkpoints completed / failed", summary.path("counts").path("completed").asLong() + " / "
          + summary.path("counts").path("failed").asLong());
      t.row("checkpoint duration avg / max (ms)", summary.path("summary").path("end_to_end_duration").path("avg").asLong()
          + " / " + summary.path("summary").path("end_to_end_duration").path("max").asLong());
      t.row("checkpointed (incremental) size avg / max (MiB)",
          mib(summary.path("summary").path("checkpointed_size").path("avg").asLong()) + " / "
              + mib(summary.path("summary").path("checkpointed_size").path("max").asLong()));
      double bytesPerId = dedupState / (double) (data.distinct() + liveClicks);
      if (checkpoint != null) {
        t.row("full state size, checkpoint " + checkpoint.path("id").asLong() + " after the last event (MiB)",
            mib(checkpoint.path("state_size").asLong()));
        t.row("  of it the dedup vertex (MiB)", mib(dedupState));
        t.row("  of it the visitor marks vertex (MiB)", mib(visitorState));
        t.row("dedup state bytes per remembered click id", fmt(bytesPerId, 1));
      }
      if (!lags.isEmpty() || clickToVisible.getTotalCount() > 0) {
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
          + " (nothing is malformed). Records in per subtask: numRecordsIn of each keyed vertex's subtasks once the topic is"
          + " read; the keyed total adds every keyed vertex's records per subtask. The checkpoint taken after the counts"
          + " were complete holds the whole dedup set and no open window, so its state size over the distinct click ids"
          + " (backlog and live) is the per-id cost (an upper bound: RocksDB files not yet compacted); the visitor marks are"
          + " a vertex of their own. Lag: for each minute that ended while live clicks flowed, when click_counts first held all"
          + " of that minute's live clicks.");
      t.print(out);
      if (stateCurve != null) {
        stateCurve.print(out, report);
      }

      boolean exact = totals[0] + totals[1] == data.distinct() && totals[1] == data.distinctBots() && totals[2] == data.rows();
      String what = plan.workload() + " workload";
      report.target("pipeline (" + what + "): counts exact", exact ? "exact" : "OFF: " + (totals[0] + totals[1]) + " vs " + data.distinct(),
          exact, "sum, bot sum and rows of click_counts vs the generated truth");
      report.target("pipeline (" + what + "): 0 dead letters", count(dlq), dlq == 0, "");
      if (plan.stateCurve() && checkpoint != null) {
        report.ratio("pipeline.state", "bytes_per_click_id", bytesPerId);
        report.target("pipeline: ≤ 35 bytes of checkpointed state per remembered click id", fmt(bytesPerId, 1) + " B",
            bytesPerId <= 35, count(data.distinct() + liveClicks) + " ids; the dedup vertex");
      }
      lags.values().stream().mapToDouble(Double::doubleValue).max().ifPresent(max -> report.target(
          "pipeline: lag from a minute's end to its count (no figure in the issue)", fmt(max, 1) + " s at most", true,
          "live clicks after the backlog"));
      if (clickToVisible.getTotalCount() > 0) {
        double p99 = Histograms.ms(clickToVisible, 99) / 1000;
        report.target("pipeline: a click visible within 5 s (p99)", fmt(p99, 2) + " s", p99 <= 5,
            LIVE_CLICKS_PER_SECOND + " live clicks/s; p50 " + fmt(Histograms.ms(clickToVisible, 50) / 1000, 2) + " s");
      }
      return run;
    } finally {
      job.cancel().get(60, TimeUnit.SECONDS);
      try {
        job.getJobExecutionResult().get(60, TimeUnit.SECONDS);
      } catch (Exception expected) {
        // a cancelled job ends exceptionally
      }
    }
  }

  private static String avgOnly(Optional<JsonNode> spread) {
    return spread.map(v -> fmt(v.path("avg").asDouble(), 0)).orElse("–");
  }

  /** Records in per subtask of every keyed vertex (those behind a hash shuffle), once the topic is read. */
  private static List<KeyedLoad> keyedLoad(FlinkRest rest, String jobId) {
    List<KeyedLoad> loads = new ArrayList<>();
    JsonNode plan = rest.get("/jobs/" + jobId + "/plan").path("plan").path("nodes");
    for (JsonNode node : plan) {
      boolean keyed = false;
      for (JsonNode input : node.path("inputs")) {
        keyed |= input.path("ship_strategy").asText().equals("HASH");
      }
      if (!keyed) {
        continue;
      }
      String vertex = node.path("id").asText();
      int parallelism = node.path("parallelism").asInt();
      long[] in = new long[parallelism];
      for (int i = 0; i < parallelism; i++) {
        JsonNode metrics = rest.get("/jobs/" + jobId + "/vertices/" + vertex + "/subtasks/" + i + "/metrics?get=numRecordsIn");
        for (JsonNode m : metrics) {
          in[i] = (long) m.path("value").asDouble();
        }
      }
      loads.add(new KeyedLoad(shortName(node.path("description").asText()), in));
    }
    return loads;
  }

  private static String shortName(String description) {
    String plain = description.replaceAll("<[^>]*>", "").replace("&gt;", ">").trim();
    return plain.length() > 60 ? plain.substring(0, 57) + "..." : plain;
  }

  /** One keyed vertex's records in, per subtask. */
  record KeyedLoad(String vertex, long[] recordsIn) {
    double skew() {
      return skew(recordsIn);
    }

    String describe() {
      return java.util.Arrays.stream(recordsIn).mapToObj(Table::count).collect(java.util.stream.Collectors.joining(" / "))
          + " (" + fmt(skew(), 3) + ")";
    }

    /** Max over mean of the records every keyed vertex took in, per subtask. */
    static double skewOfTotal(List<KeyedLoad> loads) {
      int subtasks = loads.stream().mapToInt(l -> l.recordsIn.length).max().orElse(0);
      long[] total = new long[subtasks];
      for (KeyedLoad load : loads) {
        for (int i = 0; i < load.recordsIn.length; i++) {
          total[i] += load.recordsIn[i];
        }
      }
      return skew(total);
    }

    static double skew(long[] values) {
      double mean = java.util.Arrays.stream(values).average().orElse(0);
      return mean == 0 ? Double.NaN : java.util.Arrays.stream(values).max().getAsLong() / mean;
    }
  }

  /**
   * The job's checkpoints while it reads the backlog: at each, how many click ids the dedup set held (from
   * the dedup input sampled around the checkpoint's trigger time, less the data set's share of duplicates),
   * the dedup chain's full state size and the checkpoint's duration and incremental size.
   */
  private static final class StateCurve {
    private final FlinkRest rest;
    private final String jobId;
    private final String dedup;
    private final ClickDataset.Truth data;
    /** The dedup input samples the run takes: (nanos, records in, epoch millis), growing as it reads. */
    private final List<long[]> samples;
    private final TreeMap<Long, JsonNode> completed = new TreeMap<>();
    private final Map<Long, Long> dedupStateById = new TreeMap<>();
    private long lastPoll;

    StateCurve(FlinkRest rest, String jobId, String dedup, ClickDataset.Truth data, List<long[]> samples) {
      this.samples = samples;
      this.rest = rest;
      this.jobId = jobId;
      this.dedup = dedup;
      this.data = data;
    }

    void poll() {
      if (System.currentTimeMillis() - lastPoll < 1000) {
        return;
      }
      lastPoll = System.currentTimeMillis();
      for (JsonNode checkpoint : rest.checkpoints(jobId).path("history")) {
        long id = checkpoint.path("id").asLong();
        if (checkpoint.path("status").asText().equals("COMPLETED") && !completed.containsKey(id)) {
          completed.put(id, checkpoint);
          dedupStateById.put(id,
              rest.checkpointDetails(jobId, id).path("tasks").path(dedup).path("state_size").asLong(-1));
        }
      }
    }

    /** Distinct click ids taken in by {@code epochMillis}: the last dedup input sample before it. */
    private long idsAt(long epochMillis) {
      long in = 0;
      for (long[] sample : samples) {
        if (sample[2] <= epochMillis) {
          in = sample[1];
        }
      }
      return Math.round(in * (data.distinct() / (double) data.events()));
    }

    void print(PrintStream out, Report report) {
      Table t = new Table("State and checkpoints as the remembered click ids grow (one run, the Zipf backlog)",
          "checkpoint", "click ids remembered", "dedup state (MiB)", "bytes per id", "duration (ms)",
          "incremental size (MiB)");
      JsonNode largest = null;
      long largestIds = 0;
      for (Map.Entry<Long, JsonNode> e : completed.entrySet()) {
        JsonNode c = e.getValue();
        long ids = idsAt(c.path("trigger_timestamp").asLong());
        long state = dedupStateById.getOrDefault(e.getKey(), -1L);
        t.row(e.getKey(), count(ids), mib(state), ids == 0 ? "–" : fmt(state / (double) ids, 1),
            c.path("end_to_end_duration").asLong(), mib(c.path("checkpointed_size").asLong()));
        if (ids >= largestIds) {
          largest = c;
          largestIds = ids;
        }
      }
      t.note("Ids at a checkpoint: the dedup input sampled just before its trigger time, less the data set's duplicate share;"
          + " sizes from the REST API's checkpoint details (RocksDB files, before compaction catches up). Durations include"
          + " the time barriers wait behind the backlog in the network buffers.");
      t.print(out);
      if (largest != null) {
        report.ratio("pipeline.checkpoint_at_" + Math.round(largestIds / 1e6) + "M_ids", "duration_ms",
            largest.path("end_to_end_duration").asLong());
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
    List<String> tasks = new ArrayList<>();
    for (JsonNode vertex : rest.get("/jobs/" + jobId).path("vertices")) {
      String name = vertex.path("name").asText();
      String id = vertex.path("id").asText();
      tasks.add(name.substring(0, Math.min(name.length(), 28)) + " " + avgOnly(rest.vertexMetricSpread(jobId, id,
          "busyTimeMsPerSecond")) + "/" + avgOnly(rest.vertexMetricSpread(jobId, id, "backPressuredTimeMsPerSecond")));
    }
    return List.of(skew, busy, backpressured, String.join("; ", tasks));
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
  private long[] awaitCounts(ClickDataset.Truth data, Duration patience) throws Exception {
    long deadline = System.nanoTime() + patience.toNanos();
    long[] totals;
    do {
      Thread.sleep(500);
      try (Connection c = stack.connect(); Statement s = c.createStatement();
          ResultSet rs = s.executeQuery("SELECT coalesce(sum(clicks), 0), coalesce(sum(bot_clicks), 0), count(*) FROM click_counts WHERE code LIKE 'L%'")) {
        rs.next();
        totals = new long[] {rs.getLong(1), rs.getLong(2), rs.getLong(3)};
      }
    } while (totals[0] + totals[1] < data.distinct() && System.nanoTime() < deadline);
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
