package io.tally.reconcile;

import io.tally.clickjob.CountingOptions;
import io.tally.clickjob.UniqueClicks;
import io.tally.clickjob.functions.ParseClicks;
import io.tally.clickjob.io.AggregateUpserts;
import io.tally.clickjob.io.ClickCountUpsert;
import io.tally.clickjob.io.ClickSerializer;
import io.tally.clickjob.io.RawClickDeserializer;
import io.tally.clickjob.records.Click;
import io.tally.clickjob.records.DimensionCount;
import io.tally.clickjob.records.MinuteCount;
import io.tally.clickjob.records.PeriodTotals;
import io.tally.clickjob.records.RawClick;
import io.tally.reconcile.functions.CountInto;
import io.tally.reconcile.functions.CountMalformedByReason;
import io.tally.reconcile.functions.InRange;
import io.tally.reconcile.functions.RecountLink;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.api.common.RuntimeExecutionMode;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.source.Source;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ExecutionOptions;
import org.apache.flink.configuration.PipelineOptions;
import org.apache.flink.connector.jdbc.JdbcExecutionOptions;
import org.apache.flink.connector.jdbc.JdbcStatementBuilder;
import org.apache.flink.connector.jdbc.core.datastream.sink.JdbcSink;
import org.apache.flink.connector.kafka.source.KafkaSource;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.kafka.clients.consumer.OffsetResetStrategy;
import org.apache.kafka.common.TopicPartition;

/**
 * Batch reconciliation: replays the click topic for a time range in Flink BATCH mode, recounts human and
 * bot clicks per (code, minute), hour and day, unique visitors and the hourly breakdowns after dropping
 * every duplicate click id in the range, classifying every user agent anew, and makes {@code click_counts}
 * and the aggregate tables agree with the recount for every closed minute and every whole closed hour and
 * day (see {@link CountsReconciler} and {@link AggregatesReconciler}) that the log still covers in every
 * partition ({@link LogCoverage}). It refuses to repair anything when the topic is missing or nothing
 * was read, and when a repair would remove more than {@code --max-removed-share} of the stored clicks it
 * checked, unless {@code --force}; a refused run exits with {@link ReconcileReport#EXIT_REFUSED}.
 *
 * <p>Run with {@code flink run batch-reconcile-*-job.jar --from 2h --to now} or {@code ./tally reconcile};
 * {@code --help} lists the flags ({@link ReconcileOptions}).
 */
public final class ReconcileJob {

  public static final String JOB_NAME = "tally-reconcile";
  /** The streaming job's window; both jobs must agree on it for rows to line up. */
  public static final Duration WINDOW = Duration.ofMinutes(1);

  static final String EVENTS_READ = "eventsRead";
  static final String CLICKS_IN_RANGE = "clicksInRange";
  static final String DISTINCT_CLICKS = "distinctClicks";

  private ReconcileJob() {}

  public static void main(String[] args) throws Exception {
    ReconcileOptions options = ReconcileOptions.parse(args);
    if (options == null) {
      return;
    }
    ReconcileReport report = run(StreamExecutionEnvironment.getExecutionEnvironment(), options, Instant.now());
    System.out.print(report.summary());
    if (report.refused()) {
      System.exit(report.exitStatus());
    }
  }

  /**
   * Flink settings the recount needs wherever it runs: BATCH mode, and chained operators that pass records
   * on without copying them, which is safe because every function here treats its input as immutable.
   */
  public static Configuration configuration() {
    Configuration conf = new Configuration();
    conf.set(ExecutionOptions.RUNTIME_MODE, RuntimeExecutionMode.BATCH);
    conf.set(PipelineOptions.OBJECT_REUSE, true);
    return conf;
  }

  /**
   * Recounts, compares and (unless a dry run or refused) repairs; returns the report. Refuses to repair at
   * all when the topic does not exist or nothing was read from it; otherwise judges only what the log still
   * covers, asked of the broker after the read, since retention may move on while it runs.
   */
  public static ReconcileReport run(StreamExecutionEnvironment env, ReconcileOptions options, Instant now) throws Exception {
    TimeRange range = options.range(now);
    RemovalLimit limit = RemovalLimit.of(options);
    try (CountsReconciler counts =
        new CountsReconciler(options.jdbcUrl(), options.jdbcUser(), options.jdbcPassword())) {
      Instant closedBefore = options.closedBefore(now, counts.streamProgress());
      long runId = counts.startRun(range, closedBefore, options.dryRun(), limit);
      try {
        LogCoverage before = LogCoverage.probe(options.bootstrapServers(), options.topic(), options.readSlack());
        if (!before.exists()) {
          return counts.refuse(runId, range, closedBefore, options.dryRun(), before, "topic '" + options.topic()
              + "' does not exist at " + options.bootstrapServers() + ": there is no log to recount (a misnamed --topic?)",
              CountsReconciler.Recount.NOTHING);
        }
        env.configure(configuration());
        if (options.parallelism() > 0) {
          env.setParallelism(options.parallelism());
        }
        buildRecount(env, range, options.counting(), kafkaSource(options, range), recountSinks(options, runId));
        CountsReconciler.Recount recount = recount(env.execute(JOB_NAME));
        LogCoverage coverage = LogCoverage.probe(options.bootstrapServers(), options.topic(), options.readSlack());
        if (recount.eventsRead() == 0) {
          return counts.refuse(runId, range, closedBefore, options.dryRun(), coverage, "read no record of topic '"
              + options.topic() + "' from " + range.from().minus(options.readSlack()) + " to " + range.to().plus(options.readSlack())
              + ": a recount of nothing would delete every stored row in the range (is the topic empty, emptied by"
              + " retention, or the wrong one?)", recount);
        }
        return counts.reconcile(runId, range, closedBefore, options.dryRun(), limit, coverage, recount,
            options.repairBatchSize(), WINDOW.toMillis());
      } catch (Exception | Error e) {
        counts.failRun(runId);
        throw e;
      }
    }
  }

  /** Where the recount lands: one staging table per counts table. */
  record RecountSinks(Sink<MinuteCount> minutes, Sink<PeriodTotals> hours, Sink<PeriodTotals> days,
      Sink<DimensionCount> dimensions, Sink<DimensionCount> dayDimensions) {}

  /** The recount graph, with source and sinks passed in. */
  static void buildRecount(StreamExecutionEnvironment env, TimeRange range, CountingOptions counting,
      Source<RawClick, ?, ?> source, RecountSinks recount) {
    SingleOutputStreamOperator<Click> clicks =
        env.fromSource(source, WatermarkStrategy.noWatermarks(), "Click topic (range)")
            .map(new CountInto<>(EVENTS_READ)).name("Count records read")
            .process(new ParseClicks(), ClickSerializer.TYPE).name("Parse and validate clicks");

    clicks.getSideOutput(ParseClicks.DEAD_LETTERS)
        .map(new CountMalformedByReason()).name("Count malformed by reason")
        .sinkTo(new DiscardingSink<>()).name("No dead letters from reconcile");

    // The streaming job's own dedup and visitor marks, remembering every id and visitor of the range; in
    // BATCH mode each keyed step holds one key's state at a time, so no link's clicks sit on one heap.
    DataStream<Click> inRange =
        clicks.process(new InRange(range), ClickSerializer.TYPE).name("Clicks in range")
            .map(new CountInto<>(CLICKS_IN_RANGE)).name("Count clicks in range")
            .returns(ClickSerializer.TYPE);
    SingleOutputStreamOperator<MinuteCount> counted =
        UniqueClicks.of(inRange, UniqueClicks.Memory.wholeInput(), WINDOW, Duration.ZERO)
            .map(new CountInto<>(DISTINCT_CLICKS)).name("Count distinct clicks")
            .returns(ClickSerializer.TYPE)
            .keyBy(Click::code)
            .process(new RecountLink(WINDOW.toMillis(), counting.maxDimensionValues()))
            .name("Count minutes, hours and days per link");
    counted.sinkTo(recount.minutes()).name("Recount to staging table");
    counted.getSideOutput(RecountLink.HOURS).sinkTo(recount.hours()).name("Hour recount to staging table");
    counted.getSideOutput(RecountLink.DAYS).sinkTo(recount.days()).name("Day recount to staging table");
    counted.getSideOutput(RecountLink.DIMENSIONS).sinkTo(recount.dimensions())
        .name("Breakdown recount to staging table");
    counted.getSideOutput(RecountLink.DAY_DIMENSIONS).sinkTo(recount.dayDimensions())
        .name("Daily breakdown recount to staging table");
  }

  static KafkaSource<RawClick> kafkaSource(ReconcileOptions options, TimeRange range) {
    // Clicks sit in the log by arrival, a little out of event-time order: read some slack on both sides.
    long start = range.from().minus(options.readSlack()).toEpochMilli();
    long stop = range.to().plus(options.readSlack()).toEpochMilli();
    return KafkaSource.<RawClick>builder()
        .setBootstrapServers(options.bootstrapServers())
        .setTopics(options.topic())
        .setGroupId("tally-reconcile")
        .setStartingOffsets(new FromTimestampElseEarliest(start))
        .setBounded(OffsetsInitializer.timestamp(stop))
        .setDeserializer(new RawClickDeserializer())
        .setProperty("commit.offsets.on.checkpoint", "false")
        .build();
  }

  /**
   * Starts each partition at its first record at or after {@code timestamp}, like {@link
   * OffsetsInitializer#timestamp}, but when retention deletes that record before it is read, goes on from
   * the earliest record left instead of jumping to the end: the coverage asked of the broker after the read
   * then still describes what was read.
   */
  static final class FromTimestampElseEarliest implements OffsetsInitializer {
    private final OffsetsInitializer byTimestamp;

    FromTimestampElseEarliest(long timestamp) {
      this.byTimestamp = OffsetsInitializer.timestamp(timestamp);
    }

    @Override
    public Map<TopicPartition, Long> getPartitionOffsets(
        Collection<TopicPartition> partitions, PartitionOffsetsRetriever partitionOffsetsRetriever) {
      return byTimestamp.getPartitionOffsets(partitions, partitionOffsetsRetriever);
    }

    @Override
    public OffsetResetStrategy getAutoOffsetResetStrategy() {
      return OffsetResetStrategy.EARLIEST;
    }
  }

  /**
   * The staging tables' writes. Each row is bound by the streaming job's own statement for its table (same
   * columns, same order), with the run's id after them; a row written again replaces the earlier one.
   */
  static RecountSinks recountSinks(ReconcileOptions options, long runId) {
    return new RecountSinks(
        staging(options, "INSERT INTO reconcile_recount (code, minute, clicks, bot_clicks, run_id) VALUES (?, ?, ?, ?, ?)"
            + " ON CONFLICT (run_id, code, minute) DO UPDATE SET clicks = EXCLUDED.clicks, bot_clicks = EXCLUDED.bot_clicks",
            new ClickCountUpsert(), 5, runId),
        staging(options, "INSERT INTO reconcile_recount_hourly (code, hour, clicks, bot_clicks, visitors, run_id)"
            + " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (run_id, code, hour) DO UPDATE SET clicks = EXCLUDED.clicks,"
            + " bot_clicks = EXCLUDED.bot_clicks, visitors = EXCLUDED.visitors",
            AggregateUpserts.HOURS, 6, runId),
        staging(options, "INSERT INTO reconcile_recount_daily (code, day, clicks, bot_clicks, visitors, run_id)"
            + " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (run_id, code, day) DO UPDATE SET clicks = EXCLUDED.clicks,"
            + " bot_clicks = EXCLUDED.bot_clicks, visitors = EXCLUDED.visitors",
            AggregateUpserts.DAYS, 6, runId),
        staging(options, "INSERT INTO reconcile_recount_dimensions (code, hour, dimension, value, clicks, run_id)"
            + " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (run_id, code, dimension, hour, value) DO UPDATE SET clicks = EXCLUDED.clicks",
            AggregateUpserts.DIMENSIONS, 6, runId),
        staging(options, "INSERT INTO reconcile_recount_dimensions_daily (code, day, dimension, value, clicks, run_id)"
            + " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (run_id, code, dimension, day, value) DO UPDATE SET clicks = EXCLUDED.clicks",
            AggregateUpserts.DAY_DIMENSIONS, 6, runId));
  }

  private static <T> Sink<T> staging(
      ReconcileOptions options, String sql, JdbcStatementBuilder<T> row, int runIdIndex, long runId) {
    return JdbcSink.<T>builder()
        .withQueryStatement(sql, (PreparedStatement ps, T value) -> {
          row.accept(ps, value);
          ps.setLong(runIdIndex, runId);
        })
        .withExecutionOptions(JdbcExecutionOptions.builder().withBatchSize(5000).withMaxRetries(3).build())
        .buildAtLeastOnce(options.connection().jdbc());
  }

  private static CountsReconciler.Recount recount(JobExecutionResult result) {
    SortedMap<String, Long> malformed = new TreeMap<>();
    for (Map.Entry<String, Object> e : result.getAllAccumulatorResults().entrySet()) {
      if (e.getKey().startsWith(CountMalformedByReason.PREFIX)) {
        malformed.put(e.getKey().substring(CountMalformedByReason.PREFIX.length()), (Long) e.getValue());
      }
    }
    return new CountsReconciler.Recount(
        accumulator(result, EVENTS_READ), accumulator(result, CLICKS_IN_RANGE), accumulator(result, DISTINCT_CLICKS), malformed);
  }

  private static long accumulator(JobExecutionResult result, String name) {
    Object value = result.getAccumulatorResult(name);
    return value == null ? 0 : (Long) value;
  }
}
