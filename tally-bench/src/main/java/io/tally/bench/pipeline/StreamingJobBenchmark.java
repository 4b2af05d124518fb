package io.tally.bench.pipeline;

import static io.tally.testing.Table.fmt;

import com.fasterxml.jackson.databind.JsonNode;
import io.tally.bench.support.Columns;
import io.tally.bench.support.CpuMeter;
import io.tally.bench.support.DatabaseWrites;
import io.tally.bench.support.Histograms;
import io.tally.bench.support.Report;
import io.tally.bench.support.Sql;
import io.tally.clickjob.ClickJobOptions;
import io.tally.embedded.Ports;
import io.tally.local.FlinkRest;
import io.tally.local.LocalClickJob;
import io.tally.local.LocalServices;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.HdrHistogram.Histogram;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code bench pipeline}: the streaming click job on the preloaded topic, at one parallelism or
 * several, and on every click of one link; throughput against the plain consumer, exactness, load
 * per subtask, state and checkpoints, then the lag of live clicks.
 */
public final class StreamingJobBenchmark extends BacklogBenchmark {

  private static final Logger LOG = LoggerFactory.getLogger(StreamingJobBenchmark.class);
  private static final String VISITORS_VERTEX = "Mark new visitors";
  static final int LIVE_CLICKS_PER_SECOND = 2_000;
  static final int LIVE_CODES = 1_000;

  /** A run that measures throughput only stops reading here. */
  static final double THROUGHPUT_ONLY_SHARE = 0.5;

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
    String topic = PipelineBenchmark.TOPIC;
    int parallelism = settings.parallelism();
    JobRun zipf =
        runJob(
            new JobPlan(
                "zipf", topic, backlog.truth(), parallelism, settings.lagDuration(), true, true));
    JobRun hot = null;
    if (settings.hotEvents() > 0) {
      ClickDataset.Truth hotTruth =
          backlog.preload(topic + "-hot", settings.hotEvents(), 1, "every click on one link");
      hot =
          runJob(
              new JobPlan(
                  "hot", topic + "-hot", hotTruth, parallelism, Duration.ZERO, false, true));
    }
    if (settings.agentEvents() > 0) {
      agentsCell(topic, parallelism);
    }
    List<JobRun> curve = new ArrayList<>(List.of(zipf));
    for (int other : settings.extraParallelisms()) {
      curve.add(
          runJob(new JobPlan("zipf", topic, backlog.truth(), other, Duration.ZERO, false, false)));
    }

    double overConsumer = zipf.sustained / backlog.rawDecodeRate();
    report.ratio("pipeline.events_per_s", "value", zipf.sustained);
    report.ratio("pipeline/decoding_consumer", "throughput", overConsumer);
    report.target(
        "pipeline: ≥ 100,000 events/s",
        fmt(zipf.sustained, 0) + " events/s",
        zipf.sustained >= 100_000,
        "Zipf, parallelism " + parallelism);
    report.target(
        "pipeline: ≥ 0.2× the decoding consumer",
        fmt(overConsumer, 3) + "×",
        overConsumer >= 0.2,
        "consumer + decode " + fmt(backlog.rawDecodeRate(), 0) + "/s");
    if (hot != null) {
      report.ratio("pipeline.hot.subtask_skew", "records_in", hot.keyedSkew);
      report.ratio("pipeline.hot/zipf", "throughput", hot.sustained / zipf.sustained);
      report.target(
          "pipeline: hot-link load skew ≤ 1.2 (max ÷ mean keyed records in per subtask)",
          fmt(hot.keyedSkew, 3),
          hot.keyedSkew <= 1.2,
          "parallelism " + parallelism + "; per operator in the hot table");
    }
    if (curve.size() > 1) {
      printCurve(curve, zipf);
    }
  }

  /**
   * What a click costs the job when each carries a user agent never seen before, against the same
   * clicks with the workload's few agents: two topics of the same events, the second with every
   * agent's last number made the click's own ({@link ClickDataset#withFreshAgent}), each read to
   * half by the job at the configured parallelism.
   */
  private void agentsCell(String topic, int parallelism) throws Exception {
    int events = settings.agentEvents();
    int codes = Math.min(settings.codes(), 1_000);
    ClickDataset.Truth same =
        backlog.preload(topic + "-agents", events, codes, "the workload's own agents");
    ClickDataset.Truth fresh =
        backlog.preload(
            topic + "-fresh-agents",
            events,
            codes,
            "each click's agent never seen before",
            ClickDataset::withFreshAgent);
    JobRun sameRun =
        runJob(
            new JobPlan(
                "same-agents", topic + "-agents", same, parallelism, Duration.ZERO, false, false));
    JobRun freshRun =
        runJob(
            new JobPlan(
                "fresh-agents",
                topic + "-fresh-agents",
                fresh,
                parallelism,
                Duration.ZERO,
                false,
                false));
    double cost = sameRun.sustained / freshRun.sustained;
    report.ratio("pipeline.fresh_agents/same_agents", "cost", cost);
    report.target(
        "pipeline: a fresh agent per click costs ≤ 2× the workload's own agents",
        fmt(cost, 2) + "×",
        cost <= 2,
        fmt(sameRun.sustained, 0)
            + " against "
            + fmt(freshRun.sustained, 0)
            + " events/s, "
            + events
            + " events each");
  }

  /** The Zipf topic's rate at each parallelism, against the rate at the configured one. */
  private void printCurve(List<JobRun> curve, JobRun zipf) {
    int share = (int) (THROUGHPUT_ONLY_SHARE * 100);
    new Columns<JobRun>()
        .and("parallelism", run -> run.plan.parallelism())
        .and("sustained events/s", run -> fmt(run.sustained, 0))
        .and(
            "÷ parallelism " + settings.parallelism(),
            run -> fmt(run.sustained / zipf.sustained, 3))
        .and("busy ms/s per subtask, parse (avg)", run -> run.parseBusy)
        .and("busy ms/s per subtask, dedup (avg)", run -> run.dedupBusy)
        .table("Pipeline throughput against parallelism (Zipf topic, same run)", curve)
        .note(
            "Runs at other parallelisms read the same topic and stop at "
                + share
                + "% of it (their rate is 10% → "
                + share
                + "%). All share the machine's 2 cores with Kafka and PostgreSQL, so"
                + " parallelism 2 cannot double parallelism 1 here.")
        .print(out);
    curve.stream()
        .filter(run -> run.plan.parallelism() == 1 && settings.parallelism() == 2)
        .findFirst()
        .ifPresent(
            single ->
                report.ratio(
                    "pipeline.parallelism_2/1", "throughput", zipf.sustained / single.sustained));
  }

  /**
   * One run of the click job: which data, at which parallelism, what to measure beyond the
   * throughput.
   *
   * @param stateCurve whether to follow state and checkpoints as the backlog is read
   * @param countsToo whether to read the whole topic and check the counts, or only half for the
   *     throughput
   */
  record JobPlan(
      String workload,
      String topic,
      ClickDataset.Truth truth,
      int parallelism,
      Duration lag,
      boolean stateCurve,
      boolean countsToo) {}

  /** What a run measured; beyond its throughput only when it read the whole topic. */
  static final class JobRun {
    final JobPlan plan;
    double sustained;
    double keyedSkew = Double.NaN;
    String parseBusy = "–";
    String dedupBusy = "–";
    double consumedSeconds;
    double countsSeconds;

    /** CPU while the rate was sustained, or null when not sampled. */
    CpuMeter.Usage usage;

    /** Load per subtask halfway through ({@link SubtaskLoad#read}), or null when not read. */
    List<String> midRunLoad;

    List<KeyedLoad> keyedLoad;

    /** PostgreSQL's writes from submission until the counts were exact. */
    DatabaseWrites writes;

    DatabaseWrites.Mark writesTo;

    /** Clicks, bot clicks and rows of click_counts. */
    long[] totals;

    long deadLetters;
    Duration checkpointInterval;

    /** The job's checkpoint statistics from the REST API. */
    JsonNode checkpoints;

    /** The checkpoint after the last event, or null when none completed. */
    JsonNode lastCheckpoint;

    /**
     * That checkpoint's state in bytes, of the dedup and the visitor marks vertices; -1 unknown.
     */
    long dedupState = -1;

    long visitorState = -1;

    /** Whether people's clicks were deduped beside their marks, not by click id. */
    boolean dedupPerVisitor;

    long liveClicks;

    /** Per minute that ended while live clicks flowed, seconds until its count was complete. */
    Map<Long, Double> lags = Map.of();

    /** Click-to-visible latencies of the live clicks, in nanoseconds. */
    Histogram clickToVisible = Histograms.newHistogram();

    /** What the live phase measured, or null without one. */
    LiveClicks.Latency latency;

    /** The checkpoints taken while live clicks were timed. */
    List<LiveCheckpoints.Checkpoint> liveCheckpoints = List.of();

    JobRun(JobPlan plan) {
      this.plan = plan;
    }
  }

  private JobRun runJob(JobPlan plan) throws Exception {
    Sql.emptyCountTables(stack);
    JobRun run = new JobRun(plan);
    DatabaseWrites.Mark writesFrom = DatabaseWrites.Mark.take(stack, cpu);
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
    long deadLettersBefore = backlog.endOffsets(PipelineBenchmark.DLQ_TOPIC);
    long submitted = System.nanoTime();
    try (LocalClickJob job =
        LocalClickJob.start(
            options,
            LocalClickJob.Setup.of(Ports.ephemeral(), work.resolve("tmp"))
                .withFlinkConf(settings.flinkConf()))) {
      DedupInput input = DedupInput.of(job.rest(), job.jobId());
      StateCurve curve =
          plan.stateCurve() ? new StateCurve(job.rest(), job.jobId(), input, plan.truth()) : null;
      run.dedupPerVisitor = input.vertexIds().size() > 1;
      readBacklog(run, job, input, curve);
      run.consumedSeconds = (input.lastNanos() - submitted) / 1e9;
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
      run.keyedLoad = KeyedLoad.read(job.rest(), job.jobId());
      run.keyedSkew = KeyedLoad.skewOfTotal(run.keyedLoad);
      countWhileLiveClicksFlow(run, submitted);
      if (run.latency != null) {
        run.liveCheckpoints =
            LiveCheckpoints.read(
                job.rest(), job.jobId(), run.latency.startedAt(), System.currentTimeMillis());
      }
      run.writes = DatabaseWrites.between(writesFrom, run.writesTo, cpu);
      readLastCheckpoint(run, job.rest(), job.jobId(), input.vertexId());
      run.deadLetters = backlog.endOffsets(PipelineBenchmark.DLQ_TOPIC) - deadLettersBefore;
      run.checkpointInterval = options.checkpointInterval();
      StreamingRunReport runReport = new StreamingRunReport(backlog, run);
      runReport.print(out);
      if (run.latency != null) {
        LiveCheckpoints.print(out, run.latency, run.liveCheckpoints);
      }
      if (curve != null) {
        curve.print(out, report);
      }
      runReport.targets(report);
      return run;
    }
  }

  /**
   * Follows the dedup input until the job has read what the plan asks for: its sustained rate from
   * 10% to 90% of that, the CPU meanwhile, and the load per subtask halfway.
   */
  private void readBacklog(JobRun run, LocalClickJob job, DedupInput input, StateCurve curve)
      throws InterruptedException {
    long events = run.plan.truth().events();
    long readUpTo = run.plan.countsToo() ? events : (long) (events * THROUGHPUT_ONLY_SHARE);
    AtomicReference<CpuMeter.Snapshot> fromTenth = new AtomicReference<>();
    AtomicReference<CpuMeter.Snapshot> toNineTenths = new AtomicReference<>();
    FlinkRest rest = job.rest();
    String jobId = job.jobId();
    input.awaitRecords(
        readUpTo,
        in -> {
          if (fromTenth.get() == null && in >= events / 10) {
            fromTenth.set(cpu.snapshot());
          }
          if (toNineTenths.get() == null && in >= readUpTo * 9 / 10) {
            toNineTenths.set(cpu.snapshot());
          }
          if (run.midRunLoad == null && in >= readUpTo / 2) {
            String dedup = input.busiestVertexId();
            run.midRunLoad = SubtaskLoad.read(rest, jobId, dedup);
            run.parseBusy = SubtaskLoad.busy(rest, jobId, rest.vertexId(jobId, "Click topic"));
            run.dedupBusy = SubtaskLoad.busy(rest, jobId, dedup);
          }
          if (curve != null) {
            curve.poll();
          }
          LOG.info(
              "{}-p{}: dedup numRecordsIn {}", run.plan.workload(), run.plan.parallelism(), in);
        });
    run.sustained = input.rate(events / 10, readUpTo * 9 / 10);
    if (fromTenth.get() != null && toNineTenths.get() != null) {
      run.usage = cpu.between(fromTenth.get(), toNineTenths.get());
    }
  }

  /**
   * Sends clicks happening now, as in normal operation, while waiting for the backlog's counts:
   * they move every partition's watermark past the backlog's last minutes (so its counts complete).
   * Then times how long a minute, and a click, take to be counted.
   */
  private void countWhileLiveClicksFlow(JobRun run, long submitted) throws Exception {
    LiveClicks live =
        new LiveClicks(
            stack.bootstrapServers(),
            run.plan.topic(),
            LIVE_CLICKS_PER_SECOND,
            LIVE_CODES,
            settings.seed());
    try {
      run.totals =
          awaitCounts(run.plan.truth(), Duration.ofMinutes(2).plus(settings.idleTimeout()));
      run.countsSeconds = (System.nanoTime() - submitted) / 1e9;
      run.writesTo = DatabaseWrites.Mark.take(stack, cpu);
      if (!run.plan.lag().isZero()) {
        LiveClicks.Latency latency = live.measureLatency(stack, run.plan.lag());
        run.lags = latency.lags();
        run.clickToVisible = latency.clickToVisible();
        run.latency = latency;
      }
    } finally {
      live.close();
    }
    run.liveClicks = live.sent();
  }

  /** The checkpoint taken once the counts are complete: the state of the whole dedup set. */
  private static void readLastCheckpoint(JobRun run, FlinkRest rest, String jobId, String dedup)
      throws InterruptedException {
    run.lastCheckpoint =
        awaitCheckpointAfter(rest, jobId, System.currentTimeMillis(), Duration.ofSeconds(60));
    run.checkpoints = rest.checkpoints(jobId);
    if (run.lastCheckpoint != null) {
      JsonNode tasks =
          rest.checkpointDetails(jobId, run.lastCheckpoint.path("id").asLong()).path("tasks");
      run.dedupState = tasks.path(dedup).path("state_size").asLong(-1);
      run.visitorState =
          tasks.path(rest.vertexId(jobId, VISITORS_VERTEX)).path("state_size").asLong(-1);
    }
  }

  /**
   * Waits until click_counts adds up to the distinct clicks; returns clicks, bot clicks and rows.
   */
  private long[] awaitCounts(ClickDataset.Truth data, Duration patience) throws Exception {
    long deadline = System.nanoTime() + patience.toNanos();
    long[] totals;
    do {
      Thread.sleep(500);
      totals = countTotals();
    } while (totals[0] + totals[1] < data.distinct() && System.nanoTime() < deadline);
    // A moment more: an extra (wrong) row would show up now rather than never.
    Thread.sleep(2000);
    return countTotals();
  }

  private long[] countTotals() throws Exception {
    return Sql.firstRow(
        stack,
        "SELECT coalesce(sum(clicks), 0), coalesce(sum(bot_clicks), 0), count(*) FROM click_counts"
            + " WHERE code LIKE 'L%'");
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
}
