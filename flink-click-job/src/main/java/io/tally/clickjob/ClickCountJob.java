package io.tally.clickjob;

import io.tally.clickjob.functions.CountClicksPerLink;
import io.tally.clickjob.functions.CountLedgerMarks;
import io.tally.clickjob.functions.EventTimeProgress;
import io.tally.clickjob.functions.LateClickToDeadLetter;
import io.tally.clickjob.functions.PreAggregateMinutes;
import io.tally.clickjob.functions.WatermarksOnly;
import io.tally.clickjob.io.CollapsingJdbcSink;
import io.tally.clickjob.io.DeadLetterSerializer;
import io.tally.clickjob.io.RewindToOpenDay;
import io.tally.clickjob.io.WallClockWatermarks;
import io.tally.counting.UniqueClicks;
import io.tally.counting.functions.ParseClicks;
import io.tally.counting.periods.MinuteTotals;
import io.tally.counting.periods.Recount;
import io.tally.counting.records.AggregateRow;
import io.tally.counting.records.Click;
import io.tally.counting.records.DeadLetter;
import io.tally.counting.records.LedgerMark;
import io.tally.counting.records.LedgerRow;
import io.tally.counting.records.RawClick;
import io.tally.counting.records.StreamProgress;
import io.tally.counting.serde.AggregateRowSerializer;
import io.tally.counting.serde.ClickSerializer;
import io.tally.counting.serde.MinuteTotalsSerializer;
import io.tally.counting.serde.RawClickDeserializer;
import io.tally.counting.sql.AggregateTables;
import io.tally.counting.sql.AggregateUpserts;
import io.tally.counting.sql.WriteAggregates;
import java.time.Duration;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.source.Source;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.PipelineOptions;
import org.apache.flink.connector.base.DeliveryGuarantee;
import org.apache.flink.connector.jdbc.JdbcStatementBuilder;
import org.apache.flink.connector.kafka.sink.KafkaSink;
import org.apache.flink.connector.kafka.source.KafkaSource;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.function.SerializableFunction;

/**
 * The streaming click-count job: Kafka → parse and classify (malformed → dead letters) → a person's
 * click keyed by (link, visitor, day, click id), placed by (link, visitor, day) → drop duplicates
 * and mark new visitors, chained; the other clicks keyed by click id → drop duplicate click ids
 * (late → dead letters) ({@link UniqueClicks}; reconciliation keeps the same rules over one sort) →
 * add up partial minute tallies per subtask, behind the marks and behind the other clicks → key by
 * code → add them into the link's minutes, hours and days ({@link CountClicksPerLink}) → idempotent
 * upserts into PostgreSQL, and the job's event-time progress for the stats API's {@code
 * fresh_until}. Why each step is keyed as it is: ADR-006.
 *
 * <p>This class only wires; each step is a small class in {@code functions} or {@code io}. Run it
 * with {@code flink run flink-click-job-*-job.jar --help} for its flags (see {@link
 * ClickJobOptions}).
 */
public final class ClickCountJob {

  /**
   * Stable operator ids: savepoints and retained checkpoints map state to operators by these. Every
   * stateful uid carries the state layout's version, {@code -v8} since the visitor marks are keyed
   * by (link, visitor, day): a savepoint of an older layout matches none of them, so Flink refuses
   * it, and with {@code --allowNonRestoredState} (or {@code ./tally up} finding an old checkpoint)
   * nothing of it is restored and the job starts as without state, rewinding to recount the open
   * day ({@link RewindToOpenDay}). Restoring only some of the old operators would count wrong: the
   * source's offsets without the open minutes they had filled lose the open minutes' clicks. An
   * operator added to the layout later carries a version of its own ({@link
   * UniqueClicks#ROUTE_UID}, {@link UniqueClicks#VISITOR_DEDUP_UID}) and starts empty from a
   * savepoint that lacks it, which it is made to do safely.
   */
  public static final String SOURCE_UID = "click-source-v8";

  public static final String PARSE_UID = "parse-clicks";
  public static final String DEDUP_UID = UniqueClicks.DEDUP_UID;
  public static final String VISITORS_UID = UniqueClicks.VISITORS_UID;
  public static final String PRE_AGGREGATE_MARKED_UID = "pre-aggregate-minutes-with-a-visitor";
  public static final String PRE_AGGREGATE_UNMARKED_UID = "pre-aggregate-minutes-without-a-visitor";
  public static final String LATE_UID = "late-clicks-to-dead-letters";
  public static final String COUNT_UID = "count-clicks-per-link-v8";
  public static final String WATERMARKS_UID = "watermarks-only";

  /** Keeps the run it reports for, so it carries the layout's version like the others. */
  public static final String PROGRESS_UID = "event-time-progress-v8";

  public static final String DLQ_SINK_UID = "dead-letter-sink";
  public static final String AGGREGATES_SINK_UID = "aggregates-sink";
  public static final String PROGRESS_SINK_UID = "stream-progress-sink";
  public static final String DUPLICATE_MARKS_UID = "duplicates-to-ledger-marks";
  public static final String LATE_MARKS_UID = "late-clicks-to-ledger-marks";
  public static final String LEDGER_UID = "count-ledger-marks";
  public static final String LEDGER_SINK_UID = "ledger-sink";

  private static final TypeInformation<LedgerMark> LEDGER_MARK =
      TypeInformation.of(LedgerMark.class);

  public static final String JOB_NAME = AggregateUpserts.STREAMING_JOB;

  /**
   * The number of key groups, fixed because keyed state is stored by key group: a savepoint
   * restores only into a job of the same maximum parallelism. Any parallelism up to it works.
   */
  public static final int MAX_PARALLELISM = 128;

  private ClickCountJob() {}

  public static void main(String[] args) throws Exception {
    ClickJobOptions options = ClickJobOptions.parse(args);
    if (options == null) {
      return;
    }
    StreamExecutionEnvironment env =
        StreamExecutionEnvironment.getExecutionEnvironment(configuration(options));
    build(env, options);
    env.execute(JOB_NAME);
  }

  /**
   * Flink settings the job needs wherever it runs: RocksDB with incremental checkpoints,
   * exactly-once checkpoints retained when the job is cancelled, and restarts with exponential
   * backoff.
   *
   * <p>Three settings are for speed, from profiling {@code bench pipeline} (see
   * docs/benchmarks.md): keyed timers live on the heap rather than in RocksDB, where registering
   * them was a large share of a keyed task's time (the job itself sets none per key; Flink's own
   * operators may); RocksDB keeps bloom filters, because almost every dedup lookup is for a click
   * id it has never seen; and chained operators pass records on without copying them, which is safe
   * because every function here treats its input as immutable.
   */
  public static Configuration configuration(ClickJobOptions options) {
    Configuration conf = new Configuration();
    conf.setString("state.backend.type", "rocksdb");
    conf.setString("state.backend.rocksdb.timer-service.factory", "HEAP");
    conf.setString("state.backend.rocksdb.use-bloom-filter", "true");
    conf.set(PipelineOptions.OBJECT_REUSE, true);
    conf.setString("execution.checkpointing.incremental", "true");
    conf.setString(
        "execution.checkpointing.interval", options.checkpointInterval().toMillis() + " ms");
    conf.setString("execution.checkpointing.mode", "EXACTLY_ONCE");
    conf.setString(
        "execution.checkpointing.externalized-checkpoint-retention", "RETAIN_ON_CANCELLATION");
    conf.setString("execution.checkpointing.num-retained", "3");
    if (!options.checkpointDir().isBlank()) {
      conf.setString("execution.checkpointing.dir", options.checkpointDir());
    }
    conf.setString("restart-strategy.type", "exponential-delay");
    conf.setString("restart-strategy.exponential-delay.initial-backoff", "1 s");
    conf.setString("restart-strategy.exponential-delay.max-backoff", "1 min");
    conf.setString("pipeline.name", JOB_NAME);
    return conf;
  }

  /** Adds the job to {@code env} with Kafka and PostgreSQL as source and sinks. */
  public static void build(StreamExecutionEnvironment env, ClickJobOptions options) {
    // Read before the job starts, and used only if it starts without state: a restored job resumes
    // at its checkpoint's offsets, with the recount it started with.
    build(
        env,
        options,
        RewindToOpenDay.onKafka(
            options.connection().kafkaClientProperties(),
            options.topic(),
            options.groupId(),
            options.outOfOrderness(),
            options.allowedLateness()));
  }

  /**
   * Adds the job to {@code env}, starting where {@code start} says if it starts without state. A
   * caller that only inspects the graph (its operators and their uids) passes a start of its own
   * and asks Kafka nothing.
   */
  public static void build(
      StreamExecutionEnvironment env, ClickJobOptions options, RewindToOpenDay.Start start) {
    if (options.parallelism() > 0) {
      env.setParallelism(options.parallelism());
    }
    buildGraph(
        env,
        options,
        kafkaSource(options, start.initializer()),
        start.recount(),
        deadLetterSink(options),
        // One row: the job's own.
        upsertSink(
            options,
            AggregateUpserts.PROGRESS_SQL,
            AggregateUpserts.progress(JOB_NAME, options.allowedLateness()),
            progress -> JOB_NAME),
        upsertSink(
            options,
            AggregateUpserts.LEDGER_SQL,
            AggregateUpserts.LEDGER,
            row -> Tuple2.of(row.code(), row.hourStart())));
  }

  /** The graph itself, with source and sinks passed in so that tests can substitute them. */
  static void buildGraph(
      StreamExecutionEnvironment env,
      ClickJobOptions options,
      Source<RawClick, ?, ?> source,
      Recount recount,
      Sink<DeadLetter> deadLetters,
      Sink<StreamProgress> progress,
      Sink<LedgerRow> ledger) {
    env.setMaxParallelism(MAX_PARALLELISM);
    DataStream<RawClick> raw =
        env.fromSource(
                source,
                WallClockWatermarks.strategy(options.outOfOrderness(), options.idleTimeout()),
                "Click topic")
            .uid(SOURCE_UID);

    SingleOutputStreamOperator<Click> clicks =
        raw.process(new ParseClicks(options.counting().crawlerAgents()), ClickSerializer.TYPE)
            .name("Parse and validate clicks")
            .uid(PARSE_UID);

    UniqueClicks.Unique unique =
        UniqueClicks.of(
            clicks,
            new UniqueClicks.Memory(options.dedupTtl(), options.stateTtl()),
            options.allowedLateness());

    // One pre-aggregation chained behind each branch: behind their union it would be a task of its
    // own, and every click would be serialized once more to reach it.
    DataStream<MinuteTotals> partials =
        preAggregate(unique.marked(), options)
            .name("Add up minutes per subtask, clicks past the visitor marks")
            .uid(PRE_AGGREGATE_MARKED_UID)
            .union(
                preAggregate(unique.unmarked(), options)
                    .name("Add up minutes per subtask, other clicks")
                    .uid(PRE_AGGREGATE_UNMARKED_UID));

    SingleOutputStreamOperator<AggregateRow> counted = countPerLink(partials, options, recount);

    // The writer is a task of its own: a JDBC batch blocks its thread until PostgreSQL has
    // committed it, and chained to the counting it held the counting up for that long.
    SingleOutputStreamOperator<DeadLetter> refused =
        counted
            .transform(
                "Upsert click_counts, click_hourly, click_daily, click_dimensions_hourly,"
                    + " click_dimensions_daily",
                TypeInformation.of(DeadLetter.class),
                aggregatesWriter(options))
            .uid(AGGREGATES_SINK_UID)
            .disableChaining();

    // One subtask behind every counting subtask sees their minimum watermark: the job's event time.
    // Only the watermarks need to reach it.
    counted
        .flatMap(new WatermarksOnly<>(), counted.getType())
        .name("Watermarks only")
        .uid(WATERMARKS_UID)
        .global()
        .transform(
            "Report event-time progress",
            TypeInformation.of(StreamProgress.class),
            new EventTimeProgress<>())
        .setParallelism(1)
        .uid(PROGRESS_UID)
        .sinkTo(progress)
        .setParallelism(1)
        .name("Upsert stream_progress")
        .uid(PROGRESS_SINK_UID);

    DataStream<DeadLetter> late =
        unique
            .late()
            .map(new LateClickToDeadLetter(options.topic()))
            .name("Late clicks to dead letters")
            .uid(LATE_UID);

    unique
        .duplicates()
        .map(click -> LedgerMark.of(click, LedgerMark.Kind.DUPLICATE), LEDGER_MARK)
        .name("Copies to ledger marks")
        .uid(DUPLICATE_MARKS_UID)
        .union(
            unique
                .late()
                .map(click -> LedgerMark.of(click, LedgerMark.Kind.LATE), LEDGER_MARK)
                .name("Late clicks to ledger marks")
                .uid(LATE_MARKS_UID),
            refused.getSideOutput(WriteAggregates.REFUSED_ROWS))
        .keyBy(CountLedgerMarks.KEY, CountLedgerMarks.KEY_TYPE)
        .process(
            // A copy may come as long as the dedup remembers its click, and the hour's last click
            // may come up to an hour after its first mark.
            new CountLedgerMarks(
                options.dedupTtl().plus(Duration.ofHours(1)).plus(options.allowedLateness())),
            TypeInformation.of(LedgerRow.class))
        .name("Count what each link set aside per hour")
        .uid(LEDGER_UID)
        .sinkTo(ledger)
        .name("Upsert link_ledger_hourly")
        .uid(LEDGER_SINK_UID);

    clicks
        .getSideOutput(ParseClicks.DEAD_LETTERS)
        .union(late, refused)
        .sinkTo(deadLetters)
        .name("Dead-letter topic")
        .uid(DLQ_SINK_UID);
  }

  /**
   * Each subtask's clicks added up per (link, minute) until the watermark reaches the minute's end,
   * sent sooner while the minute is live; the caller names it and gives its uid.
   */
  static SingleOutputStreamOperator<MinuteTotals> preAggregate(
      DataStream<Click> clicks, ClickJobOptions options) {
    return clicks.transform(
        "Add up minutes per subtask",
        MinuteTotalsSerializer.TYPE,
        new PreAggregateMinutes(
            LIVE_PARTIALS_EVERY.toMillis(), options.counting().maxDimensionValues()));
  }

  /**
   * How long a click of a live minute may wait in a subtask's partial tally: a fraction of the
   * early firings'.
   */
  static final Duration LIVE_PARTIALS_EVERY = Duration.ofMillis(500);

  /**
   * The partial tallies keyed by link and added into its minutes, hours and days: rows of every
   * table out.
   */
  static SingleOutputStreamOperator<AggregateRow> countPerLink(
      DataStream<MinuteTotals> partials, ClickJobOptions options, Recount recount) {
    return partials
        .keyBy(MinuteTotals::code)
        .transform(
            "Count clicks per link",
            AggregateRowSerializer.TYPE,
            new CountClicksPerLink(
                options.allowedLateness(),
                options.stateTtl(),
                options.earlyFiringInterval(),
                options.counting().maxDimensionValues(),
                recount))
        .uid(COUNT_UID);
  }

  static KafkaSource<RawClick> kafkaSource(
      ClickJobOptions options, OffsetsInitializer startingOffsets) {
    return KafkaSource.<RawClick>builder()
        .setProperties(options.connection().kafkaClientProperties())
        .setTopics(options.topic())
        .setGroupId(options.groupId())
        .setStartingOffsets(startingOffsets)
        .setDeserializer(new RawClickDeserializer())
        .setProperty("partition.discovery.interval.ms", "60000")
        .setProperty("commit.offsets.on.checkpoint", "true")
        .build();
  }

  static Sink<DeadLetter> deadLetterSink(ClickJobOptions options) {
    return KafkaSink.<DeadLetter>builder()
        .setKafkaProducerConfig(options.connection().kafkaClientProperties())
        .setRecordSerializer(new DeadLetterSerializer(options.dlqTopic()))
        .setDeliveryGuarantee(DeliveryGuarantee.AT_LEAST_ONCE)
        .build();
  }

  /**
   * The aggregate tables' writer: one transaction per batch for all five; its output is the rows
   * PostgreSQL refused.
   */
  public static WriteAggregates aggregatesWriter(ClickJobOptions options) {
    return new WriteAggregates(
        options.connection().jdbc(),
        AggregateTables.READ_SIDE,
        options.sinkBatchSize(),
        options.sinkFlushInterval(),
        5);
  }

  /**
   * An at-least-once JDBC sink of an upsert that never lowers a row, so every repeated write is
   * harmless; {@code key} is the row's conflict target, and a batch sends only the last row of each
   * key.
   */
  static <T> Sink<T> upsertSink(
      ClickJobOptions options,
      String sql,
      JdbcStatementBuilder<T> statement,
      SerializableFunction<T, ?> key) {
    return new CollapsingJdbcSink<>(
        options.connection().jdbc(),
        sql,
        statement,
        key,
        options.sinkBatchSize(),
        options.sinkFlushInterval().toMillis(),
        5);
  }
}
