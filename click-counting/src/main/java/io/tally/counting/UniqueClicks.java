package io.tally.counting;

import io.tally.counting.functions.DropDuplicateClicks;
import io.tally.counting.functions.DropDuplicatesByMinute;
import io.tally.counting.functions.MarkNewVisitors;
import io.tally.counting.functions.ParseClicks;
import io.tally.counting.functions.VisitorHours;
import io.tally.counting.records.Click;
import io.tally.counting.serde.ClickIdSerializer;
import io.tally.counting.serde.ClickSerializer;
import io.tally.counting.serde.VisitorDaySerializer;
import java.time.Duration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;

/**
 * The streaming job's per-click rules: drop every copy of a click id, then mark each visitor's
 * first click on a link in its hour and day (reconciliation runs the same rules over one sort:
 * {@code io.tally.reconcile.functions.RecountLinks}). Each step is keyed by what its rule needs and
 * nothing else: the dedup by click id, the marks by (link, visitor, day), so a copy meets its
 * original whatever a classifier says of either, and a viral link is spread over every subtask.
 * Bots and clicks without a visitor hash skip the marks and their shuffle.
 */
public final class UniqueClicks {

  public static final String DEDUP_UID = "drop-duplicate-clicks-v8";
  public static final String VISITORS_UID = "mark-new-visitors-v8";
  public static final String DEDUP_NAME = "Drop duplicate click ids";
  public static final String VISITORS_NAME = "Mark new visitors";

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
   * The clicks to count, each once: people's clicks with a visitor hash, their first clicks in
   * their hour and day marked, and the rest (bots, clicks without a visitor hash) as they came; and
   * the clicks too late to count, each once; and the copies dropped.
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
   * Each click once, judged late or on time once ({@link DropDuplicatesByMinute}), people's first
   * clicks in their hour and day marked.
   *
   * @param clicks parsed clicks ({@link ParseClicks})
   * @param allowedLateness how long after its minute's end a click still counts
   */
  public static Unique of(DataStream<Click> clicks, Memory memory, Duration allowedLateness) {
    SingleOutputStreamOperator<Click> unique =
        clicks
            .keyBy(DropDuplicateClicks.KEY, ClickIdSerializer.TYPE)
            .transform(
                DEDUP_NAME,
                ClickSerializer.TYPE,
                new DropDuplicatesByMinute(memory.clickIds(), allowedLateness))
            .uid(DEDUP_UID);

    DataStream<Click> marked =
        unique
            .filter(VisitorHours::counts)
            .name("Clicks with a visitor")
            .uid("clicks-with-a-visitor")
            .keyBy(MarkNewVisitors.KEY, VisitorDaySerializer.TYPE)
            .process(new MarkNewVisitors(memory.visitorDays()), ClickSerializer.TYPE)
            .name(VISITORS_NAME)
            .uid(VISITORS_UID);
    DataStream<Click> unmarked =
        unique
            .filter(click -> !VisitorHours.counts(click))
            .name("Clicks without a visitor")
            .uid("clicks-without-a-visitor");
    return new Unique(
        marked,
        unmarked,
        unique.getSideOutput(DropDuplicateClicks.LATE),
        unique.getSideOutput(DropDuplicateClicks.DUPLICATES));
  }
}
