package io.tally.bench.pipeline;

import static io.tally.testing.Table.fmt;

import com.fasterxml.jackson.databind.JsonNode;
import io.tally.bench.support.CpuMeter;
import io.tally.bench.support.Histograms;
import io.tally.bench.support.Report;
import io.tally.clickjob.ClickJobOptions;
import io.tally.embedded.Ports;
import io.tally.local.FlinkRest;
import io.tally.local.LocalClickJob;
import io.tally.local.LocalServices;
import io.tally.testing.Table;
import java.io.PrintStream;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.HdrHistogram.Histogram;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code bench pipeline}: the streaming click job on the preloaded topic, at one parallelism or
 * several, and on every click of one link; throughput against the plain consumer, exactness, load
 * per subtask, state and checkpoints, then the lag of live clicks.
 */
public final class StreamingJobBenchmark extends BacklogBenchmark {

  private static final Logger LOG = LoggerFactory.getLogger(StreamingJobBenchmark.class);
  static final String DEDUP_VERTEX = "Drop duplicate click ids";
  private static final String VISITORS_VERTEX = "Mark new visitors";
  static final int LIVE_CLICKS_PER_SECOND = 2_000;
  static final int LIVE_CODES = 1_000;

  StreamingJobBenchmark(
      LocalServices stack, PipelineBenchmark backlog, PrintStream out, Report report) {
    super(stack, backlog, out, report);
  }

  /**
   * The click job on the Zipf topic as {@code ./tally up} runs it (RocksDB, incremental checkpoints
   * every 10 s), then every link's clicks on one link (the hot workload), then the Zipf topic again
   * at each extra parallelism: throughput, exactness, the load of each keyed operator per subtask,
   * and state and checkpoints as the remembered click ids grow.
   */
  void run() throws Exception {
    JobRun zipf =
        runJob(
            new JobPlan(
                "zipf",
                PipelineBenchmark.TOPIC,
                backlog.truth(),
                settings.parallelism(),
                settings.lagDuration(),
                true));
    JobRun hot = null;
    if (settings.hotEvents() > 0) {
      String hotTopic = PipelineBenchmark.TOPIC + "-hot";
      ClickDataset.Truth hotTruth =
          backlog.preload(hotTopic, settings.hotEvents(), 1, "every click on one link");
      hot =
          runJob(
              new JobPlan("hot", hotTopic, hotTruth, settings.parallelism(), Duration.ZERO, false));
    }
    List<JobRun> curve = new ArrayList<>(List.of(zipf));
    for (int parallelism : settings.extraParallelisms()) {
      curve.add(
          runJob(
              new JobPlan(
                      "zipf",
                      PipelineBenchmark.TOPIC,
                      backlog.truth(),
                      parallelism,
                      Duration.ZERO,
                      false)
                  .throughputOnly()));
    }

    report.ratio("pipeline.events_per_s", "value", zipf.sustained);
    report.ratio(
        "pipeline/decoding_consumer", "throughput", zipf.sustained / backlog.rawDecodeRate());
    report.target(
        "pipeline: ≥ 100,000 events/s",
        fmt(zipf.sustained, 0) + " events/s",
        zipf.sustained >= 100_000,
        "Zipf, parallelism " + settings.parallelism());
    report.target(
        "pipeline: ≥ 0.2× the decoding consumer",
        fmt(zipf.sustained / backlog.rawDecodeRate(), 3) + "×",
        zipf.sustained / backlog.rawDecodeRate() >= 0.2,
        "consumer + decode " + fmt(backlog.rawDecodeRate(), 0) + "/s");
    if (hot != null) {
      report.ratio("pipeline.hot.subtask_skew", "records_in", hot.keyedSkew);
      report.ratio("pipeline.hot/zipf", "throughput", hot.sustained / zipf.sustained);
      report.target(
          "pipeline: hot-link load skew ≤ 1.2 (max ÷ mean keyed records in per subtask)",
          fmt(hot.keyedSkew, 3),
          hot.keyedSkew <= 1.2,
          "parallelism " + settings.parallelism() + "; per operator in the hot table");
    }
    if (curve.size() > 1) {
      Table t =
          new Table(
              "Pipeline throughput against parallelism (Zipf topic, same run)",
              "parallelism",
              "sustained events/s",
              "÷ parallelism " + settings.parallelism(),
              "busy ms/s per subtask, parse (avg)",
              "busy ms/s per subtask, dedup (avg)");
      for (JobRun run : curve) {
        t.row(
            run.plan.parallelism(),
            fmt(run.sustained, 0),
            fmt(run.sustained / zipf.sustained, 3),
            run.parseBusy,
            run.dedupBusy);
      }
      t.note(
          "Runs at other parallelisms read the same topic and stop at "
              + (int) (THROUGHPUT_ONLY_SHARE * 100)
              + "% of it (their rate is 10% → "
              + (int) (THROUGHPUT_ONLY_SHARE * 100)
              + "%). All share the machine's 2 cores"
              + " with Kafka and PostgreSQL, so parallelism 2 cannot double parallelism 1 here.");
      t.print(out);
      JobRun single =
          curve.stream().filter(r -> r.plan.parallelism() == 1).findFirst().orElse(null);
      if (single != null && settings.parallelism() == 2) {
        report.ratio("pipeline.parallelism_2/1", "throughput", zipf.sustained / single.sustained);
      }
    }
  }

  /** One run of the click job: which data, at which parallelism, what to measure. */
  record JobPlan(
      String workload,
      String topic,
      ClickDataset.Truth truth,
      int parallelism,
      Duration lag,
      boolean stateCurve,
      boolean countsToo) {
    JobPlan(
        String workload,
        String topic,
        ClickDataset.Truth truth,
        int parallelism,
        Duration lag,
        boolean stateCurve) {
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
    try (Connection c = stack.connect();
        Statement s = c.createStatement()) {
      s.execute("TRUNCATE click_counts, click_hourly, click_daily, click_dimensions_hourly");
    }
    ClickDataset.Truth data = plan.truth();
    JobRun run = new JobRun(plan);
    String name = plan.workload() + "-p" + plan.parallelism();
    Path work = stack.dir().resolve("flink-" + name);
    ClickJobOptions options =
        ClickJobOptions.parse(
            "--bootstrap-servers", stack.bootstrapServers(),
            "--topic", plan.topic(),
            "--dlq-topic", PipelineBenchmark.DLQ_TOPIC,
            "--group-id", "bench-click-job-" + name,
            "--jdbc-url", stack.jdbcUrl(),
            "--jdbc-user", stack.dbUser(),
            "--jdbc-password", stack.dbPassword(),
            "--checkpoint-dir", work.resolve("checkpoints").toUri().toString(),
            "--parallelism", String.valueOf(plan.parallelism()),
            "--idle-timeout", settings.idleTimeout().toMillis() + "ms");

    long dlqBefore = endOffsets(PipelineBenchmark.DLQ_TOPIC);
    long submitted = System.nanoTime();
    try (LocalClickJob job =
        LocalClickJob.start(
            options,
            LocalClickJob.Setup.of(Ports.ephemeral(), work.resolve("tmp"))
                .withFlinkConf(settings.flinkConf()))) {
      String jobId = job.jobId();
      FlinkRest rest = job.rest();
      String dedup = awaitVertex(rest, jobId);
      long readUpTo =
          plan.countsToo() ? data.events() : (long) (data.events() * THROUGHPUT_ONLY_SHARE);
      // Sample the dedup operator's input count until it has seen every event.
      List<long[]> samples = new ArrayList<>();
      StateCurve stateCurve =
          plan.stateCurve() ? new StateCurve(rest, jobId, dedup, data, samples) : null;
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
            midRunLoad = SubtaskLoad.read(rest, jobId, dedup);
            run.parseBusy =
                SubtaskLoad.avgOnly(
                    rest.vertexMetricSpread(
                        jobId, rest.vertexId(jobId, "Click topic"), "busyTimeMsPerSecond"));
            run.dedupBusy =
                SubtaskLoad.avgOnly(rest.vertexMetricSpread(jobId, dedup, "busyTimeMsPerSecond"));
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
          throw new IllegalStateException(
              "the job took in " + last + " of " + data.events() + " events in 20 minutes");
        }
        Thread.sleep(250);
      }
      long consumedAt = samples.get(samples.size() - 1)[0];
      run.sustained = rate(samples, data.events() / 10, readUpTo * 9 / 10);
      if (!plan.countsToo()) {
        out.printf(
            Locale.ROOT,
            "%n%s at parallelism %d: %s events/s sustained (10%% → %d%% of the topic)%n",
            plan.workload(),
            plan.parallelism(),
            fmt(run.sustained, 0),
            (int) (THROUGHPUT_ONLY_SHARE * 100));
        return run;
      }
      List<KeyedLoad> keyedLoad = KeyedLoad.read(rest, jobId);
      run.keyedSkew = KeyedLoad.skewOfTotal(keyedLoad);
      double endToEnd = data.events() / ((consumedAt - submitted) / 1e9);

      // Then clicks happening now, as in normal operation: they move every partition's watermark
      // past the backlog's last minutes (so its counts complete), and time how long a minute takes
      // to be counted.
      LiveClicks live =
          new LiveClicks(
              stack.bootstrapServers(),
              plan.topic(),
              LIVE_CLICKS_PER_SECOND,
              LIVE_CODES,
              settings.seed());
      long[] totals;
      Map<Long, Double> lags = new TreeMap<>();
      Histogram clickToVisible = Histograms.newHistogram();
      long liveClicks;
      double countsSeconds;
      try {
        totals = awaitCounts(data, Duration.ofMinutes(2).plus(settings.idleTimeout()));
        countsSeconds = (System.nanoTime() - submitted) / 1e9;
        if (!plan.lag().isZero()) {
          LiveLatency.Result latency = LiveLatency.measure(stack, live, plan.lag());
          lags = latency.lags();
          clickToVisible = latency.clickToVisible();
        }
      } finally {
        live.close();
      }
      liveClicks = live.perMinute().values().stream().mapToLong(AtomicLong::get).sum();
      JsonNode checkpoint =
          awaitCheckpointAfter(rest, jobId, System.currentTimeMillis(), Duration.ofSeconds(60));
      JsonNode summary = rest.checkpoints(jobId);
      JsonNode checkpointTasks =
          checkpoint == null
              ? null
              : rest.checkpointDetails(jobId, checkpoint.path("id").asLong()).path("tasks");
      long dedupState =
          checkpointTasks == null ? -1 : checkpointTasks.path(dedup).path("state_size").asLong(-1);
      long visitorState =
          checkpointTasks == null
              ? -1
              : checkpointTasks
                  .path(rest.vertexId(jobId, VISITORS_VERTEX))
                  .path("state_size")
                  .asLong(-1);
      long dlq = endOffsets(PipelineBenchmark.DLQ_TOPIC) - dlqBefore;
      CpuMeter.Usage usage =
          cpuAt10 != null && cpuAtEnd != null ? cpu.between(cpuAt10, cpuAtEnd) : null;

      StreamingRunReport.Figures figures =
          new StreamingRunReport.Figures(
              plan,
              run,
              endToEnd,
              (consumedAt - submitted) / 1e9,
              countsSeconds,
              usage,
              midRunLoad,
              keyedLoad,
              totals,
              dlq,
              options.checkpointInterval(),
              summary,
              checkpoint,
              dedupState,
              visitorState,
              liveClicks,
              lags,
              clickToVisible);
      StreamingRunReport runReport = new StreamingRunReport(backlog, figures);
      runReport.print(out);
      if (stateCurve != null) {
        stateCurve.print(out, report);
      }
      runReport.targets(report);
      return run;
    }
  }

  static String awaitVertex(FlinkRest rest, String jobId) throws InterruptedException {
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

  /** Events per second between the first samples at or above {@code low} and {@code high}. */
  static double rate(List<long[]> samples, long low, long high) {
    long[] a = samples.stream().filter(s -> s[1] >= low).findFirst().orElse(samples.get(0));
    long[] b =
        samples.stream()
            .filter(s -> s[1] >= high)
            .findFirst()
            .orElse(samples.get(samples.size() - 1));
    if (b[0] == a[0]) {
      return Double.NaN;
    }
    return (b[1] - a[1]) / ((b[0] - a[0]) / 1e9);
  }

  /**
   * Waits until click_counts adds up to the distinct clicks; returns clicks, bot clicks and rows.
   */
  private long[] awaitCounts(ClickDataset.Truth data, Duration patience) throws Exception {
    long deadline = System.nanoTime() + patience.toNanos();
    long[] totals;
    do {
      Thread.sleep(500);
      try (Connection c = stack.connect();
          Statement s = c.createStatement();
          ResultSet rs =
              s.executeQuery(
                  "SELECT coalesce(sum(clicks), 0), coalesce(sum(bot_clicks), 0), count(*) FROM"
                      + " click_counts WHERE code LIKE 'L%'")) {
        rs.next();
        totals = new long[] {rs.getLong(1), rs.getLong(2), rs.getLong(3)};
      }
    } while (totals[0] + totals[1] < data.distinct() && System.nanoTime() < deadline);
    // A moment more: an extra (wrong) row would show up now rather than never.
    Thread.sleep(2000);
    try (Connection c = stack.connect();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT coalesce(sum(clicks), 0), coalesce(sum(bot_clicks), 0), count(*) FROM"
                    + " click_counts WHERE code LIKE 'L%'")) {
      rs.next();
      return new long[] {rs.getLong(1), rs.getLong(2), rs.getLong(3)};
    }
  }

  private static JsonNode awaitCheckpointAfter(
      FlinkRest rest, String jobId, long epochMillis, Duration patience)
      throws InterruptedException {
    long deadline = System.nanoTime() + patience.toNanos();
    while (System.nanoTime() < deadline) {
      JsonNode latest = rest.checkpoints(jobId).path("latest").path("completed");
      if (!latest.isMissingNode()
          && !latest.isNull()
          && latest.path("trigger_timestamp").asLong() > epochMillis) {
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
      List<TopicPartition> partitions =
          consumer.partitionsFor(topic).stream()
              .map(i -> new TopicPartition(topic, i.partition()))
              .toList();
      return consumer.endOffsets(partitions).values().stream().mapToLong(Long::longValue).sum();
    }
  }
}
