package io.tally.counting;

import static io.tally.counting.Clicks.MINUTE;
import static io.tally.counting.Clicks.asBot;
import static io.tally.counting.Clicks.at;
import static io.tally.counting.Clicks.botClick;
import static io.tally.counting.Clicks.idAt;
import static io.tally.counting.Clicks.visit;
import static io.tally.counting.Clicks.withId;
import static org.assertj.core.api.Assertions.assertThat;

import io.tally.counting.classify.BotKind;
import io.tally.counting.functions.DropDuplicatesByMinute;
import io.tally.counting.functions.MarkNewVisitors;
import io.tally.counting.functions.VisitorHours;
import io.tally.counting.records.Click;
import io.tally.counting.serde.ClickIdSerializer;
import io.tally.counting.serde.ClickSerializer;
import io.tally.counting.serde.VisitorDaySerializer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.metrics.Counter;
import org.apache.flink.runtime.testutils.InMemoryReporter;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link UniqueClicks} as the live job runs it, on a MiniCluster at parallelism 2, against an
 * oracle.
 */
class UniqueClicksITCase {

  private static final long HOUR = 60 * MINUTE;

  private static final InMemoryReporter METRICS = InMemoryReporter.createWithRetainedMetrics();

  @RegisterExtension
  static final MiniClusterExtension FLINK =
      new MiniClusterExtension(
          new MiniClusterResourceConfiguration.Builder()
              .setNumberTaskManagers(1)
              .setNumberSlotsPerTaskManager(2)
              .setConfiguration(METRICS.addToConfiguration(new Configuration()))
              .build());

  @Test
  void aReplayedCopyThatAnUpgradedClassifierJudgesOtherwiseIsCountedOnce() throws Exception {
    // The originals were a person's and a bot's; the classifier changed, then the log was replayed:
    // the same events, with and without a visitor hash, with ids of both kinds.
    List<Click> originals =
        List.of(
            visit7("a", at(0), "visitor-1"),
            asBot(visit7("b", at(1), "visitor-2"), "crawler"),
            visit7("c", at(2), ""),
            asBot(visit7("d", at(3), ""), "crawler"),
            visit("e", "abc", at(4), "visitor-1"),
            asBot(visit("f", "abc", at(5), "visitor-2"), "crawler"));
    List<Click> log = new ArrayList<>(originals);
    for (Click original : originals) {
      log.add(asBot(original, original.bot() ? "" : "crawler"));
    }

    List<Click> out = run(log);

    assertThat(out)
        .extracting(Click::clickId)
        .containsExactlyInAnyOrderElementsOf(originals.stream().map(Click::clickId).toList());
  }

  /**
   * A job that deduped every click by id and keyed the marks by visitor day, stopped with a
   * savepoint and resumed with the dedup per visitor: the clicks made before the upgrade, replayed
   * (some judged otherwise by the classifier), are dropped by the dedup by id that remembers them,
   * the clicks made after it go per visitor, and the visitors who come back in the same hour and
   * day are not marked again.
   */
  @Test
  void anUpgradeToTheDedupPerVisitorCountsEachClickOnceAndMarksEachVisitorOnce(
      @TempDir Path savepoints) throws Exception {
    long upgradeAt = at(30 * HOUR + 30 * MINUTE);
    List<Click> log = generated(20_000, new Random(11));
    List<Click> before = log.stream().filter(click -> click.ts() < upgradeAt).toList();
    List<Click> after =
        new ArrayList<>(log.stream().filter(click -> click.ts() >= upgradeAt).toList());
    Random random = new Random(13);
    for (int i = 0; i < 2_000; i++) {
      Click copy = before.get(random.nextInt(before.size()));
      if (random.nextBoolean()) {
        copy = asBot(copy, copy.bot() ? "" : "crawler");
      }
      after.add(random.nextInt(after.size() + 1), copy);
    }
    Set<UUID> idsBefore = before.stream().map(Click::clickId).collect(Collectors.toSet());
    long perVisitorCopies = copies(after, click -> routedByVisitor(click, upgradeAt));
    List<Click> counted = new ArrayList<>();

    JobClient earlier = runScripted(before, null, clicks -> earlierLayout(clicks, MEMORY));
    String savepoint;
    try {
      counted.addAll(awaitAccounted(earlier, before.size()));
      savepoint =
          earlier
              .stopWithSavepoint(
                  false, savepoints.toUri().toString(), SavepointFormatType.CANONICAL)
              .get(2, TimeUnit.MINUTES);
    } catch (Throwable failure) {
      cancelAfter(earlier, failure);
      throw failure;
    }
    JobClient upgraded =
        runScripted(
            after, savepoint, clicks -> UniqueClicks.of(clicks, MEMORY, Duration.ZERO, upgradeAt));
    try {
      List<Click> countedAfter = awaitAccounted(upgraded, after.size());
      counted.addAll(countedAfter);
      assertThat(countedAfter)
          .as("the upgraded job counted only the clicks made after the upgrade")
          .noneMatch(click -> idsBefore.contains(click.clickId()));
      long droppedAfter = after.size() - countedAfter.size();
      assertThat(duplicatesDropped(upgraded, UniqueClicks.VISITOR_DEDUP_NAME))
          .as("copies dropped per visitor")
          .isEqualTo(perVisitorCopies)
          .isPositive();
      assertThat(duplicatesDropped(upgraded, UniqueClicks.DEDUP_NAME))
          .as("copies dropped by id, those of clicks made before the upgrade among them")
          .isEqualTo(droppedAfter - perVisitorCopies)
          .isGreaterThanOrEqualTo(2_000);
    } catch (Throwable failure) {
      cancelAfter(upgraded, failure);
      throw failure;
    }
    upgraded.cancel().get(1, TimeUnit.MINUTES);

    assertThat(counted)
        .extracting(Click::clickId)
        .as("each click counted once")
        .doesNotHaveDuplicates()
        .containsExactlyInAnyOrderElementsOf(log.stream().map(Click::clickId).distinct().toList());
    assertThat(perLinkAndHour(counted)).isEqualTo(perLinkAndHour(oracle(log)));
  }

  @Test
  void marksTheVisitorsAndLetsTheClicksThroughThatTheOracleDoes() throws Exception {
    List<Click> log = generated(20_000, new Random(7));

    assertThat(perLinkAndHour(run(log))).isEqualTo(perLinkAndHour(oracle(log)));
  }

  private static final UniqueClicks.Memory MEMORY =
      new UniqueClicks.Memory(Duration.ofHours(24), MarkNewVisitors.LIVE_TTL);

  /** What the source gives once its clicks are read, standing in for a log that never ends. */
  private static final String NO_CLICK = "-no-click-";

  private static final Click NO_CLICK_EVENT = botClick(NO_CLICK, NO_CLICK, at(0));

  private static volatile List<Click> script = List.of();
  private static final AtomicInteger NEXT_IN_SCRIPT = new AtomicInteger();
  private static final Queue<Click> COUNTED = Outcome.COUNTED.clicks;
  private static final Queue<Click> DROPPED = Outcome.DROPPED.clicks;
  private static final Queue<Click> LATE = Outcome.LATE.clicks;

  /**
   * Starts a job that reads {@code clicks} and then goes on running, as a job on a topic does, so
   * that it can be stopped with a savepoint; from {@code savepoint} when given.
   */
  private static JobClient runScripted(
      List<Click> clicks, String savepoint, Function<DataStream<Click>, UniqueClicks.Unique> layout)
      throws Exception {
    script = List.copyOf(clicks);
    NEXT_IN_SCRIPT.set(0);
    COUNTED.clear();
    DROPPED.clear();
    LATE.clear();
    Configuration submission = new Configuration();
    if (savepoint != null) {
      submission.set(StateRecoveryOptions.SAVEPOINT_PATH, savepoint);
    }
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(submission);
    env.setParallelism(2);
    // The router alone in its task has nothing to restore from the earlier job's savepoint: only
    // the submission tells it the job resumes.
    env.disableOperatorChaining();
    DataStream<Click> read =
        env.fromSource(
                new DataGeneratorSource<>(
                    index -> {
                      int next = NEXT_IN_SCRIPT.getAndIncrement();
                      return next < script.size() ? script.get(next) : NO_CLICK_EVENT;
                    },
                    Long.MAX_VALUE,
                    RateLimiterStrategy.perSecond(10_000),
                    ClickSerializer.TYPE),
                WatermarkStrategy.noWatermarks(),
                "Scripted clicks")
            .uid("scripted-clicks")
            .filter(click -> !click.code().equals(NO_CLICK))
            .uid("clicks-only")
            .assignTimestampsAndWatermarks(
                WatermarkStrategy.<Click>forBoundedOutOfOrderness(Duration.ofDays(2))
                    .withTimestampAssigner((click, previous) -> click.ts()))
            .uid("click-times");
    UniqueClicks.Unique unique = layout.apply(read);
    unique.clicks().sinkTo(new AddTo(Outcome.COUNTED)).uid("counted");
    unique.duplicates().sinkTo(new AddTo(Outcome.DROPPED)).uid("dropped");
    unique.late().sinkTo(new AddTo(Outcome.LATE)).uid("late");
    return env.executeAsync();
  }

  /**
   * Waits until each of {@code clicks} scripted clicks was counted or dropped as a copy, then gives
   * the clicks counted.
   */
  private static List<Click> awaitAccounted(JobClient job, int clicks) {
    Awaitility.await()
        .atMost(Duration.ofMinutes(2))
        .failFast("the job ended", () -> job.getJobStatus().get().isGloballyTerminalState())
        .until(() -> COUNTED.size() + DROPPED.size() + LATE.size(), out -> out >= clicks);
    assertThat(LATE).as("late clicks").isEmpty();
    assertThat(COUNTED.size() + DROPPED.size()).as("clicks out").isEqualTo(clicks);
    return List.copyOf(COUNTED);
  }

  /**
   * Cancels a job that never ends by itself once a test failed on it, so that it frees its slots; a
   * cancel that fails too is added to the failure.
   */
  private static void cancelAfter(JobClient job, Throwable failure) {
    try {
      if (!job.getJobStatus().get().isGloballyTerminalState()) {
        job.cancel().get(1, TimeUnit.MINUTES);
      }
    } catch (Exception cancel) {
      failure.addSuppressed(cancel);
    }
  }

  /** How many copies the job's operator named {@code operator} dropped, over its subtasks. */
  private static long duplicatesDropped(JobClient job, String operator) {
    return METRICS.findOperatorMetricGroups(job.getJobID(), operator).stream()
        .mapToLong(
            group ->
                ((Counter) METRICS.getMetricsByGroup(group).get("duplicatesDropped")).getCount())
        .sum();
  }

  /** How many of {@code clicks} that {@code which} selects repeat an id of one before them. */
  private static long copies(List<Click> clicks, Predicate<Click> which) {
    List<Click> selected = clicks.stream().filter(which).toList();
    return selected.size() - selected.stream().map(Click::clickId).distinct().count();
  }

  /** Whether the upgraded job's router sends {@code click} to the dedup per visitor. */
  private static boolean routedByVisitor(Click click, long upgradeAt) {
    return !click.visitor().isEmpty()
        && !click.botKind().equals(BotKind.HEAD.label())
        && !click.botKind().equals(BotKind.BURST.label())
        && click.clickId().version() == 7
        && click.clickId().getMostSignificantBits() >>> 16 >= upgradeAt;
  }

  /**
   * The graph as it was before people's clicks were deduped per visitor: every click deduped by id,
   * then people's clicks shuffled by visitor day to the marks.
   */
  private static UniqueClicks.Unique earlierLayout(
      DataStream<Click> clicks, UniqueClicks.Memory memory) {
    SingleOutputStreamOperator<Click> unique =
        clicks
            .keyBy(DropDuplicatesByMinute.BY_CLICK_ID, ClickIdSerializer.TYPE)
            .transform(
                UniqueClicks.DEDUP_NAME,
                ClickSerializer.TYPE,
                DropDuplicatesByMinute.byClickId(memory.clickIds(), Duration.ZERO))
            .uid(UniqueClicks.DEDUP_UID);
    DataStream<Click> marked =
        unique
            .filter(VisitorHours::counts)
            .uid("clicks-with-a-visitor")
            .keyBy(MarkNewVisitors.KEY, VisitorDaySerializer.TYPE)
            .process(new MarkNewVisitors(memory.visitorDays()), ClickSerializer.TYPE)
            .uid(UniqueClicks.VISITORS_UID);
    DataStream<Click> unmarked =
        unique.filter(click -> !VisitorHours.counts(click)).uid("clicks-without-a-visitor");
    return new UniqueClicks.Unique(
        marked,
        unmarked,
        unique.getSideOutput(DropDuplicatesByMinute.LATE),
        unique.getSideOutput(DropDuplicatesByMinute.DUPLICATES));
  }

  /**
   * What became of the scripted clicks, for the test to read: the job runs in the test's JVM, and
   * an enum constant stays itself when the job's graph is serialized.
   */
  private enum Outcome {
    COUNTED,
    DROPPED,
    LATE;

    final Queue<Click> clicks = new ConcurrentLinkedQueue<>();
  }

  /** Adds what it is given to an outcome's clicks. */
  private record AddTo(Outcome outcome) implements Sink<Click> {
    @Override
    public SinkWriter<Click> createWriter(WriterInitContext context) {
      return new SinkWriter<>() {
        @Override
        public void write(Click click, Context context) {
          outcome.clicks.add(click);
        }

        @Override
        public void flush(boolean endOfInput) {}

        @Override
        public void close() {}
      };
    }
  }

  private static List<Click> run(List<Click> log) throws Exception {
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    env.setParallelism(2);
    DataStream<Click> clicks =
        env.fromData(ClickSerializer.TYPE, log.toArray(Click[]::new))
            .assignTimestampsAndWatermarks(
                WatermarkStrategy.<Click>forBoundedOutOfOrderness(Duration.ofDays(2))
                    .withTimestampAssigner((click, previous) -> click.ts()));
    List<Click> out = new ArrayList<>();
    UniqueClicks.of(clicks, MEMORY, Duration.ZERO)
        .clicks()
        .executeAndCollect()
        .forEachRemaining(out::add);
    return out;
  }

  /** A person's click on link {@code abc} with a version-7 id made at {@code ts}. */
  private static Click visit7(String label, long ts, String visitor) {
    return withId(visit(label, "abc", ts, visitor), idAt(label, ts));
  }

  /**
   * Over two days: 300 links, visitors who come back within and across hours and days, bots with
   * and without a visitor hash, bursts, clicks without a visitor hash, ids of version 7 and (one in
   * ten) not, and one in ten clicks delivered again later, at times out of order.
   */
  private static List<Click> generated(int clicks, Random random) {
    List<Click> log = new ArrayList<>();
    for (int i = 0; i < clicks; i++) {
      String code = "link" + random.nextInt(300);
      long ts = at(random.nextLong(48 * HOUR));
      int kind = random.nextInt(20);
      String visitor = "visitor-" + random.nextInt(2_000);
      Click click =
          kind == 0
              ? botClick("c" + i, code, ts)
              : kind == 1
                  ? visit("c" + i, code, ts, "")
                  : kind == 2
                      ? asBot(visit("c" + i, code, ts, visitor), "crawler")
                      : kind == 3
                          ? asBot(visit("c" + i, code, ts, visitor), "burst")
                          : visit("c" + i, code, ts, visitor);
      if (random.nextInt(10) != 0) {
        click = withId(click, idAt("c" + i, ts));
      }
      log.add(click);
      if (random.nextInt(10) == 0) {
        log.add(random.nextInt(log.size()), click);
      }
    }
    return log;
  }

  /**
   * The marks as a plain reading of the rules gives them: each id once, a visitor's first click per
   * hour and day.
   */
  private static List<Click> oracle(List<Click> log) {
    Map<UUID, Click> unique = new java.util.LinkedHashMap<>();
    log.forEach(click -> unique.putIfAbsent(click.clickId(), click));
    Map<String, Long> firstInHour = new java.util.HashMap<>();
    Map<String, Long> firstInDay = new java.util.HashMap<>();
    for (Click click : unique.values()) {
      if (!click.bot() && !click.visitor().isEmpty()) {
        String visitor = click.code() + "/" + click.visitor();
        firstInHour.merge(visitor + "/" + click.ts() / HOUR, click.ts(), Math::min);
        firstInDay.merge(visitor + "/" + click.ts() / (24 * HOUR), click.ts(), Math::min);
      }
    }
    List<Click> marked = new ArrayList<>();
    for (Click click : unique.values()) {
      String visitor = click.code() + "/" + click.visitor();
      boolean counts = !click.bot() && !click.visitor().isEmpty();
      marked.add(
          click.withNewVisitor(
              counts && firstInHour.get(visitor + "/" + click.ts() / HOUR) == click.ts(),
              counts && firstInDay.get(visitor + "/" + click.ts() / (24 * HOUR)) == click.ts()));
    }
    return marked;
  }

  /**
   * Per (link, hour): clicks, bot clicks, clicks new in their hour; per (link, day): clicks new in
   * their day. What the hour and day rows hold; which of a visitor's clicks carries a mark depends
   * on arrival order.
   */
  private static Map<String, List<Long>> perLinkAndHour(List<Click> clicks) {
    Map<String, List<Long>> rows =
        new TreeMap<>(
            clicks.stream()
                .collect(
                    Collectors.groupingBy(
                        c -> c.code() + "@hour" + c.ts() / HOUR,
                        Collectors.collectingAndThen(
                            Collectors.toList(),
                            in ->
                                List.of(
                                    (long) in.size(),
                                    in.stream().filter(Click::bot).count(),
                                    in.stream().filter(Click::newVisitorInHour).count())))));
    rows.putAll(
        clicks.stream()
            .collect(
                Collectors.groupingBy(
                    c -> c.code() + "@day" + c.ts() / (24 * HOUR),
                    Collectors.collectingAndThen(
                        Collectors.filtering(Click::newVisitorInDay, Collectors.counting()),
                        List::of))));
    return rows;
  }
}
