package io.tally.reconcile;

import io.tally.counting.CountingOptions;
import io.tally.counting.functions.ParseClicks;
import io.tally.counting.records.AggregateRow;
import io.tally.counting.records.Click;
import io.tally.counting.records.DeadLetter;
import io.tally.counting.records.MinuteCount;
import io.tally.counting.records.RawClick;
import io.tally.counting.serde.AggregateRowSerializer;
import io.tally.counting.serde.ClickSerializer;
import io.tally.counting.serde.RawClickDeserializer;
import io.tally.counting.serde.RecountKeySerializer;
import io.tally.counting.sql.AggregateTables;
import io.tally.counting.sql.UpsertTable;
import io.tally.counting.sql.WriteAggregates;
import io.tally.reconcile.functions.CollectRefusedRows;
import io.tally.reconcile.functions.CountInto;
import io.tally.reconcile.functions.CountMalformedByReason;
import io.tally.reconcile.functions.InRange;
import io.tally.reconcile.functions.MeasureTimestampDisorder;
import io.tally.reconcile.functions.RecountLinks;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;
import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.api.common.RuntimeExecutionMode;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.connector.source.Source;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.DeploymentOptions;
import org.apache.flink.configuration.ExecutionOptions;
import org.apache.flink.configuration.PipelineOptions;
import org.apache.flink.configuration.PipelineOptionsInternal;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.connector.jdbc.JdbcStatementBuilder;
import org.apache.flink.connector.kafka.source.KafkaSource;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.kafka.clients.consumer.OffsetResetStrategy;
import org.apache.kafka.common.TopicPartition;

/**
 * Batch reconciliation: replays the click topic for a time range in Flink BATCH mode, recounts
 * human and bot clicks per (code, minute), hour and day, unique visitors and the hourly breakdowns
 * after dropping every duplicate click id in the range, classifying every user agent anew, and
 * makes {@code click_counts} and the aggregate tables agree with the recount for every closed
 * minute and every whole closed hour and day (see {@link CountsReconciler} and {@link
 * AggregatesReconciler}) that the log still covers in every partition ({@link LogCoverage}). It
 * refuses to repair anything when the topic is missing or nothing was read, and when a repair would
 * remove more than {@code --max-removed-share} of the stored clicks it checked, unless {@code
 * --force}; a refused run exits with {@link ReconcileReport#EXIT_REFUSED}.
 *
 * <p>Run with {@code flink run batch-reconcile-*-job.jar --from 2h --to now} or {@code ./tally
 * reconcile}; {@code --help} lists the flags ({@link ReconcileOptions}).
 */
public final class ReconcileJob {

  public static final String JOB_NAME = "tally-reconcile";

  static final String EVENTS_READ = "eventsRead";
  static final String CLICKS_IN_RANGE = "clicksInRange";
  static final String DISTINCT_CLICKS = "distinctClicks";
  static final String TIMESTAMP_DISORDER = "timestampDisorderMillis";

  private ReconcileJob() {}

  public static void main(String[] args) throws Exception {
    ReconcileOptions options = ReconcileOptions.parse(args);
    if (options == null) {
      return;
    }
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    int status = runFromCommandLine(env, options, Instant.now(), Launch.of(env.getConfiguration()));
    if (status != 0) {
      System.exit(status);
    }
  }

  /**
   * How the job's main was started.
   *
   * @param applicationMode whether it runs inside the JobManager (application mode), where {@code
   *     execution.target} is the embedded executor
   * @param fixedJobId the job id fixed for the deployment ({@code $internal.pipeline.job-id}, which
   *     the Kubernetes operator sets), the default run key
   */
  record Launch(boolean applicationMode, Optional<String> fixedJobId) {
    static final Launch COMMAND_LINE = new Launch(false, Optional.empty());

    static Launch of(ReadableConfig conf) {
      return new Launch(
          "embedded".equals(conf.get(DeploymentOptions.TARGET)),
          conf.getOptional(PipelineOptionsInternal.PIPELINE_FIXED_JOB_ID));
    }
  }

  /**
   * What {@link #main} does, short of leaving the JVM: prints the report and returns the exit
   * status, {@link ReconcileReport#EXIT_REFUSED} for a refused run on the command line ({@code
   * flink run}), so a script notices. In application mode, where this runs inside the JobManager
   * (as the Kubernetes operator deploys it), a refused run ends as a finished job with its status
   * in {@code reconcile_runs}: exiting would end the JobManager, whose restart would run the
   * application again. There the run key defaults to the job id the operator fixes for the
   * deployment, so a restarted JobManager recounts the range the run first resolved, or nothing
   * once that run ended.
   */
  static int runFromCommandLine(
      StreamExecutionEnvironment env, ReconcileOptions options, Instant now, Launch launch)
      throws Exception {
    launch.fixedJobId().ifPresent(options::runKeyUnlessGiven);
    ReconcileReport report = run(env, options, now);
    System.out.print(report.summary());
    return report.refused() && !launch.applicationMode() ? report.exitStatus() : 0;
  }

  /**
   * Flink settings the recount needs wherever it runs: BATCH mode, and chained operators that pass
   * records on without copying them, which is safe because every function here treats its input as
   * immutable.
   */
  public static Configuration configuration() {
    Configuration conf = new Configuration();
    conf.set(ExecutionOptions.RUNTIME_MODE, RuntimeExecutionMode.BATCH);
    conf.set(PipelineOptions.OBJECT_REUSE, true);
    return conf;
  }

  /**
   * Recounts, compares and (unless a dry run or refused) repairs; returns the report. Refuses to
   * repair at all when the topic does not exist or nothing was read from it; otherwise judges only
   * what the log still covers, asked of the broker after the read, since retention may move on
   * while it runs.
   */
  public static ReconcileReport run(
      StreamExecutionEnvironment env, ReconcileOptions options, Instant now) throws Exception {
    RemovalLimit limit = RemovalLimit.of(options);
    try (CountsReconciler counts =
        new CountsReconciler(options.jdbcUrl(), options.jdbcUser(), options.jdbcPassword())) {
      for (long abandoned : counts.runs().abandonSilentRuns()) {
        System.out.println(
            "Reconcile run "
                + abandoned
                + " had not beaten for "
                + RunLedger.ABANDONED_AFTER.toMinutes()
                + " minutes: marked abandoned (its process died; what its repair committed stays)");
      }
      Optional<RunLedger.KeyedRun> previous =
          options.runKey().isPresent()
              ? counts.runs().lastRunOf(options.runKey().get())
              : Optional.empty();
      // Under a run key the range is resolved once: a restarted run recounts what its key first
      // meant.
      TimeRange range = previous.map(RunLedger.KeyedRun::range).orElseGet(() -> options.range(now));
      Optional<String> keyTaken = previous.flatMap(run -> keyTaken(options, run));
      Instant closedBefore = options.closedBefore(now, counts.streamProgress());
      long runId =
          counts
              .runs()
              .startRun(
                  range,
                  closedBefore,
                  options.dryRun(),
                  limit,
                  keyTaken.isPresent() ? Optional.empty() : options.runKey());
      try (AutoCloseable beating = counts.runs().heartbeat(runId)) {
        return recountAndReconcile(
            env, options, counts, runId, range, closedBefore, limit, keyTaken);
      } catch (Exception | Error e) {
        counts.failRun(runId);
        throw e;
      }
    }
  }

  /**
   * Why a run under the key of {@code previous} must not run again, or empty when it may: each key
   * is run once, and a run silent for {@link CountsReconciler#ABANDONED_AFTER} was marked abandoned
   * before this is asked.
   */
  private static Optional<String> keyTaken(ReconcileOptions options, RunLedger.KeyedRun previous) {
    String key = options.runKey().orElseThrow();
    if (previous.ended()) {
      return Optional.of(
          "run key '"
              + key
              + "' already ran as run "
              + previous.id()
              + " ("
              + previous.status()
              + "): each key is run once; give another key for another run");
    }
    if (previous.status().equals("running")) {
      return Optional.of(
          "run key '"
              + key
              + "' is being run by run "
              + previous.id()
              + ", which beat at "
              + previous.heartbeat()
              + "; a run silent for "
              + RunLedger.ABANDONED_AFTER.toMinutes()
              + " minutes is taken for abandoned and its range run again");
    }
    return Optional.empty();
  }

  /**
   * The started run's work: refused before the recount when its key is taken or the topic is
   * missing, after it when it read nothing; otherwise compared, and repaired unless a dry run.
   */
  private static ReconcileReport recountAndReconcile(
      StreamExecutionEnvironment env,
      ReconcileOptions options,
      CountsReconciler counts,
      long runId,
      TimeRange range,
      Instant closedBefore,
      RemovalLimit limit,
      Optional<String> keyTaken)
      throws Exception {
    LogCoverage before =
        LogCoverage.probe(
            options.connection().kafkaClientProperties(), options.topic(), options.readSlack());
    Optional<String> refusal =
        keyTaken.or(
            () ->
                before.exists()
                    ? Optional.empty()
                    : Optional.of(
                        "topic '"
                            + options.topic()
                            + "' does not exist at "
                            + options.bootstrapServers()
                            + ": there is no log to recount (a misnamed --topic?)"));
    if (refusal.isPresent()) {
      return counts.refuse(
          runId,
          range,
          closedBefore,
          options.dryRun(),
          before,
          refusal.get(),
          CountsReconciler.Recount.NOTHING);
    }
    env.configure(configuration());
    if (options.parallelism() > 0) {
      env.setParallelism(options.parallelism());
    }
    buildRecount(
        env, range, options.counting(), kafkaSource(options, range), stagingWriter(options, runId));
    CountsReconciler.Recount recount = recount(env.execute(JOB_NAME));
    // Where retention cut a partition, its earliest record's time says where its whole minutes
    // start only to within how far the log's timestamps are out of order: the read slack, or more
    // if measured.
    Duration margin =
        recount.timestampDisorder().compareTo(options.readSlack()) > 0
            ? recount.timestampDisorder()
            : options.readSlack();
    LogCoverage coverage =
        LogCoverage.probe(options.connection().kafkaClientProperties(), options.topic(), margin);
    if (recount.eventsRead() == 0) {
      return counts.refuse(
          runId,
          range,
          closedBefore,
          options.dryRun(),
          coverage,
          "read no record of topic '"
              + options.topic()
              + "' from "
              + options.readFrom(range)
              + " to its end: a recount of nothing would delete every stored row in the range"
              + " (is the topic empty, emptied by retention, or the wrong one?)",
          recount);
    }
    return counts.reconcile(
        runId,
        range,
        closedBefore,
        options.dryRun(),
        limit,
        coverage,
        recount,
        options.repairBatchSize());
  }

  /** The recount graph, with source and staging writer passed in. */
  static void buildRecount(
      StreamExecutionEnvironment env,
      TimeRange range,
      CountingOptions counting,
      Source<RawClick, ?, ?> source,
      WriteAggregates staging) {
    SingleOutputStreamOperator<Click> clicks =
        env.fromSource(source, WatermarkStrategy.noWatermarks(), "Click topic (range)")
            .map(new CountInto<>(EVENTS_READ))
            .name("Count records read")
            .map(new MeasureTimestampDisorder(TIMESTAMP_DISORDER))
            .name("Measure timestamp disorder")
            .process(new ParseClicks(counting.crawlerAgents()), ClickSerializer.TYPE)
            .name("Parse and validate clicks");

    clicks
        .getSideOutput(ParseClicks.DEAD_LETTERS)
        .map(new CountMalformedByReason())
        .name("Count malformed by reason")
        .sinkTo(new DiscardingSink<>())
        .name("No dead letters from reconcile");

    DataStream<Click> inRange =
        clicks
            .process(new InRange(range.from(), range.to()), ClickSerializer.TYPE)
            .name("Clicks in range")
            .map(new CountInto<>(CLICKS_IN_RANGE))
            .name("Count clicks in range")
            .returns(ClickSerializer.TYPE);
    // One sort serves the streaming job's dedup, its visitor marks and its per-link periods: BATCH
    // mode sorts a keyed input by key, and this key puts a link's clicks together, each visitor's
    // day inside them, and the copies of a click side by side.
    SingleOutputStreamOperator<MinuteCount> counted =
        inRange
            .keyBy(RecountLinks.KEY, RecountKeySerializer.TYPE)
            .transform(
                "Drop copies, mark new visitors, count periods per link",
                TypeInformation.of(MinuteCount.class),
                new RecountLinks(counting.maxDimensionValues(), DISTINCT_CLICKS));
    // The streaming job's writer, into the staging tables: a row PostgreSQL refuses is isolated,
    // stood in for or set aside as the stream does it, so that the recount compares alike.
    TypeInformation<AggregateRow> rows = AggregateRowSerializer.TYPE;
    counted
        .map(AggregateRow::of, rows)
        .union(
            counted.getSideOutput(RecountLinks.HOURS).map(AggregateRow::hourOf, rows),
            counted.getSideOutput(RecountLinks.DAYS).map(AggregateRow::dayOf, rows),
            counted.getSideOutput(RecountLinks.DIMENSIONS).map(AggregateRow::hourOf, rows),
            counted.getSideOutput(RecountLinks.DAY_DIMENSIONS).map(AggregateRow::dayOf, rows))
        .transform("Recount to staging tables", TypeInformation.of(DeadLetter.class), staging)
        .map(new CollectRefusedRows())
        .name("Rows the staging tables refused, for the report")
        .sinkTo(new DiscardingSink<>())
        .name("No dead letters from reconcile");
  }

  /**
   * Each partition from its first record stamped at or after {@link ReconcileOptions#readFrom} (no
   * record before it is stamped that late: Kafka's time index says so whatever the order after it)
   * to its end as the run starts. Not to the first record stamped after {@code to}: one producer
   * whose clock runs fast would end every partition's read early, and a slow one would leave its
   * clicks of the range unread. {@link InRange} then keeps the range's clicks by their own time.
   * The price is reading the log from the range to now.
   */
  static KafkaSource<RawClick> kafkaSource(ReconcileOptions options, TimeRange range) {
    long start = options.readFrom(range).toEpochMilli();
    return KafkaSource.<RawClick>builder()
        .setProperties(options.connection().kafkaClientProperties())
        .setTopics(options.topic())
        .setGroupId("tally-reconcile")
        .setStartingOffsets(new FromTimestampElseEarliest(start))
        .setBounded(OffsetsInitializer.latest())
        .setDeserializer(new RawClickDeserializer())
        .setProperty("commit.offsets.on.checkpoint", "false")
        .build();
  }

  /**
   * Starts each partition at its first record at or after {@code timestamp}, like {@link
   * OffsetsInitializer#timestamp}, but when retention deletes that record before it is read, goes
   * on from the earliest record left instead of jumping to the end: the coverage asked of the
   * broker after the read then still describes what was read.
   */
  static final class FromTimestampElseEarliest implements OffsetsInitializer {
    private final OffsetsInitializer byTimestamp;

    FromTimestampElseEarliest(long timestamp) {
      this.byTimestamp = OffsetsInitializer.timestamp(timestamp);
    }

    @Override
    public Map<TopicPartition, Long> getPartitionOffsets(
        Collection<TopicPartition> partitions,
        PartitionOffsetsRetriever partitionOffsetsRetriever) {
      return byTimestamp.getPartitionOffsets(partitions, partitionOffsetsRetriever);
    }

    @Override
    public OffsetResetStrategy getAutoOffsetResetStrategy() {
      return OffsetResetStrategy.EARLIEST;
    }
  }

  /**
   * The staging tables' writer. Each row is bound by the streaming job's own statement for its
   * table (same columns, same order), with the run's id after them; a row written again replaces
   * the earlier one.
   */
  static WriteAggregates stagingWriter(ReconcileOptions options, long runId) {
    return new WriteAggregates(
        options.connection().jdbc(),
        new AggregateTables(
            staging(
                AggregateTables.READ_SIDE.minutes(),
                "reconcile_recount",
                "(code, minute, clicks, bot_clicks, run_id) VALUES (?,"
                    + " ?, ?, ?, ?) ON CONFLICT (run_id, code, minute) DO UPDATE SET clicks ="
                    + " EXCLUDED.clicks, bot_clicks = EXCLUDED.bot_clicks",
                5,
                runId),
            staging(
                AggregateTables.READ_SIDE.hours(),
                "reconcile_recount_hourly",
                "(code, hour, clicks, bot_clicks, visitors,"
                    + " run_id) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (run_id, code, hour) DO"
                    + " UPDATE SET clicks = EXCLUDED.clicks, bot_clicks = EXCLUDED.bot_clicks,"
                    + " visitors = EXCLUDED.visitors",
                6,
                runId),
            staging(
                AggregateTables.READ_SIDE.days(),
                "reconcile_recount_daily",
                "(code, day, clicks, bot_clicks, visitors,"
                    + " visitor_sketch, run_id) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (run_id,"
                    + " code, day) DO UPDATE SET clicks = EXCLUDED.clicks, bot_clicks ="
                    + " EXCLUDED.bot_clicks, visitors = EXCLUDED.visitors, visitor_sketch ="
                    + " EXCLUDED.visitor_sketch",
                7,
                runId),
            staging(
                AggregateTables.READ_SIDE.dimensions(),
                "reconcile_recount_dimensions",
                "(code, hour, dimension, value, clicks,"
                    + " run_id) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (run_id, code, dimension,"
                    + " hour, value) DO UPDATE SET clicks = EXCLUDED.clicks",
                6,
                runId),
            staging(
                AggregateTables.READ_SIDE.dayDimensions(),
                "reconcile_recount_dimensions_daily",
                "(code, day, dimension, value,"
                    + " clicks, run_id) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (run_id, code,"
                    + " dimension, day, value) DO UPDATE SET clicks = EXCLUDED.clicks",
                6,
                runId)),
        5000,
        Duration.ofSeconds(10),
        3);
  }

  /** The read-side table's writes, into its staging table under the run's id. */
  private static <T> UpsertTable<T> staging(
      UpsertTable<T> table,
      String stagingTable,
      String columnsAndConflict,
      int runIdIndex,
      long runId) {
    JdbcStatementBuilder<T> row = table.binder();
    return new UpsertTable<>(
        stagingTable,
        "INSERT INTO " + stagingTable + " " + columnsAndConflict,
        (PreparedStatement ps, T value) -> {
          row.accept(ps, value);
          ps.setLong(runIdIndex, runId);
        },
        table.key(),
        table.standIn());
  }

  private static CountsReconciler.Recount recount(JobExecutionResult result) {
    SortedMap<String, Long> malformed = new TreeMap<>();
    for (Map.Entry<String, Object> e : result.getAllAccumulatorResults().entrySet()) {
      if (e.getKey().startsWith(CountMalformedByReason.PREFIX)) {
        malformed.put(
            e.getKey().substring(CountMalformedByReason.PREFIX.length()), (Long) e.getValue());
      }
    }
    return new CountsReconciler.Recount(
        accumulator(result, EVENTS_READ),
        accumulator(result, CLICKS_IN_RANGE),
        accumulator(result, DISTINCT_CLICKS),
        malformed,
        Duration.ofMillis(accumulator(result, TIMESTAMP_DISORDER)),
        CollectRefusedRows.lines(result.getAccumulatorResult(CollectRefusedRows.ACCUMULATOR)));
  }

  private static long accumulator(JobExecutionResult result, String name) {
    Object value = result.getAccumulatorResult(name);
    return value == null ? 0 : (Long) value;
  }
}
