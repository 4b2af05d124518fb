package io.tally.counting;

import io.tally.counting.functions.DropDuplicateVisitorClicks;
import io.tally.counting.functions.DropDuplicatesByMinute;
import io.tally.counting.functions.MarkNewVisitors;
import io.tally.counting.functions.ParseClicks;
import io.tally.counting.functions.RouteToDedup;
import io.tally.counting.functions.VisitorHours;
import io.tally.counting.records.Click;
import io.tally.counting.serde.ClickIdSerializer;
import io.tally.counting.serde.ClickSerializer;
import io.tally.counting.serde.VisitorClickSerializer;
import io.tally.counting.serde.VisitorDaySerializer;
import java.time.Duration;
import java.time.Instant;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.DataStreamUtils;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;

/**
 * The streaming job's per-click rules: drop every copy of a click id, then mark each visitor's
 * first click on a link in its hour and day (reconciliation runs the same rules over one sort:
 * {@code io.tally.reconcile.functions.RecountLinks}).
 *
 * <p>People's clicks are deduped where their marks are kept: keyed by (visitor day, click id) and
 * placed by the visitor day ({@link DropDuplicateVisitorClicks}), so the marks follow chained and a
 * person's click crosses the network once. The rest (clicks without a visitor hash, {@code HEAD}s,
 * bursts) are deduped by click id alone, spread evenly however hot a link runs. Which way a click
 * goes reads only its event ({@link RouteToDedup}), so a copy meets its original whatever a
 * classifier says of either; a viral link is spread over every subtask by its visitors.
 */
public final class UniqueClicks {

  public static final String ROUTE_UID = "route-to-dedup-v1";
  public static final String DEDUP_UID = "drop-duplicate-clicks-v8";
  public static final String VISITOR_DEDUP_UID = "drop-duplicate-visitor-clicks-v1";
  public static final String VISITORS_UID = "mark-new-visitors-v8";
  public static final String ROUTE_NAME = "Choose each click's dedup";
  public static final String DEDUP_NAME = "Drop duplicate click ids";
  public static final String VISITOR_DEDUP_NAME = "Drop duplicate clicks per visitor";
  public static final String VISITORS_NAME = "Mark new visitors";

  /**
   * How far past the instant a job's graph is built a click id made by a fast clock may still have
   * been seen by the job whose state it restores.
   */
  static final Duration CLOCK_MARGIN = Duration.ofMinutes(5);

  /**
   * How long the live job's steps remember.
   *
   * @param clickIds how long a click id is remembered
   * @param visitorDays how long a visitor's day is remembered after its last click ({@link
   *     MarkNewVisitors#LIVE_TTL} by default); both count only the time the job ran
   */
  public record Memory(Duration clickIds, Duration visitorDays) {}

  private UniqueClicks() {}

  /**
   * The clicks to count, each once: those through the visitor marks (people's clicks, their first
   * in their hour and day marked, and bots' clicks with a visitor hash as they came), the rest as
   * they came; and the clicks too late to count, each once; and the copies dropped.
   */
  public record Unique(
      DataStream<Click> marked,
      DataStream<Click> unmarked,
      DataStream<Click> late,
      DataStream<Click> duplicates) {

    /** Every click to count, in one stream. */
    public DataStream<Click> clicks() {
      return marked.union(unmarked);
    }
  }

  /**
   * Each click once, judged late or on time once, people's first clicks in their hour and day
   * marked; state restored from a job without the dedup per visitor keeps the dedup by click id for
   * the clicks made before now.
   *
   * @param clicks parsed clicks ({@link ParseClicks})
   * @param allowedLateness how long after its minute's end a click still counts
   */
  public static Unique of(DataStream<Click> clicks, Memory memory, Duration allowedLateness) {
    return of(clicks, memory, allowedLateness, Instant.now().plus(CLOCK_MARGIN).toEpochMilli());
  }

  /**
   * As {@link #of(DataStream, Memory, Duration)}, with the instant from which people's clicks are
   * deduped per visitor when the state restored had no such dedup.
   */
  public static Unique of(
      DataStream<Click> clicks, Memory memory, Duration allowedLateness, long sinceOnUpgrade) {
    boolean resumesFromState =
        clicks
            .getExecutionEnvironment()
            .getConfiguration()
            .getOptional(StateRecoveryOptions.SAVEPOINT_PATH)
            .isPresent();
    SingleOutputStreamOperator<Click> routed =
        clicks
            .process(new RouteToDedup(sinceOnUpgrade, resumesFromState), ClickSerializer.TYPE)
            .name(ROUTE_NAME)
            .uid(ROUTE_UID);

    SingleOutputStreamOperator<Click> byId =
        routed
            .keyBy(DropDuplicatesByMinute.BY_CLICK_ID, ClickIdSerializer.TYPE)
            .transform(
                DEDUP_NAME,
                ClickSerializer.TYPE,
                DropDuplicatesByMinute.byClickId(memory.clickIds(), allowedLateness))
            .uid(DEDUP_UID);
    DataStream<Click> peopleById =
        byId.filter(VisitorHours::counts)
            .name("Clicks with a visitor")
            .uid("clicks-with-a-visitor");

    SingleOutputStreamOperator<Click> byVisitor =
        routed
            .getSideOutput(RouteToDedup.BY_VISITOR)
            .connect(peopleById)
            .keyBy(
                DropDuplicateVisitorClicks.KEY,
                DropDuplicateVisitorClicks.KEY,
                VisitorClickSerializer.TYPE)
            .transform(
                VISITOR_DEDUP_NAME,
                ClickSerializer.TYPE,
                new DropDuplicateVisitorClicks(memory.clickIds(), allowedLateness))
            .uid(VISITOR_DEDUP_UID);
    DataStream<Click> marked =
        DataStreamUtils.reinterpretAsKeyedStream(
                byVisitor, MarkNewVisitors.KEY, VisitorDaySerializer.TYPE)
            .process(new MarkNewVisitors(memory.visitorDays()), ClickSerializer.TYPE)
            .name(VISITORS_NAME)
            .uid(VISITORS_UID);
    DataStream<Click> unmarked =
        byId.filter(click -> !VisitorHours.counts(click))
            .name("Clicks without a visitor")
            .uid("clicks-without-a-visitor");
    return new Unique(
        marked,
        unmarked,
        byId.getSideOutput(DropDuplicatesByMinute.LATE)
            .union(byVisitor.getSideOutput(DropDuplicatesByMinute.LATE)),
        byId.getSideOutput(DropDuplicatesByMinute.DUPLICATES)
            .union(byVisitor.getSideOutput(DropDuplicatesByMinute.DUPLICATES)));
  }
}
