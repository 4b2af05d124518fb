package io.tally.counting.functions;

import io.tally.counting.periods.LinkPeriods;
import io.tally.counting.records.Click;
import io.tally.counting.records.VisitorDay;
import java.time.Duration;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

/**
 * Marks a person's click that is its visitor's first on the link in its hour, and in its UTC day,
 * so that the counting counts unique visitors exactly by adding marks. Keyed by (link, visitor
 * hash, day) ({@link #KEY}), so every click of a visitor on a link in a day meets here, and a viral
 * link's visitors are spread over every subtask. Only clicks that {@link VisitorHours#counts} are
 * marked; a bot's click with a visitor hash, which comes here with people's from their dedup
 * ({@link DropDuplicateVisitorClicks}), is passed on unmarked. The state is one value per key: a
 * bit per hour of the day.
 *
 * <p>No click that comes here is too late to count: the dedup ({@link DropDuplicatesByMinute})
 * judged that once, against a watermark never behind this step's, so a mark is never used up on a
 * click that is not counted.
 *
 * <p>Entries expire {@link #LIVE_TTL} of the job's running time after their last write ({@link
 * Downtime}: the time the job was stopped does not count), by RocksDB's compaction filter, with no
 * timer per key: a day's marks are needed until the day has closed in event time, at most a day
 * after its last mark while the job keeps up, and the second day covers a job that was behind for
 * up to a day, as the dedup's 24 h memory does.
 */
public class MarkNewVisitors extends KeyedProcessFunction<VisitorDay, Click, Click>
    implements CheckpointedFunction {

  /** How long a visitor's day is remembered after its last click in the live job, by default. */
  public static final Duration LIVE_TTL = Duration.ofDays(2);

  /** The marks' key: the link, the visitor hash and the click's UTC day. */
  public static final KeySelector<Click, VisitorDay> KEY =
      click -> VisitorDay.of(click, Math.toIntExact(Math.floorDiv(click.ts(), LinkPeriods.DAY)));

  private final Duration forgetAfter;
  private transient ValueState<Integer> hoursSeen;
  private transient Downtime downtime;

  /**
   * @param forgetAfter how long a day's marks are kept after their last write
   */
  public MarkNewVisitors(Duration forgetAfter) {
    this.forgetAfter = forgetAfter;
  }

  @Override
  public void initializeState(FunctionInitializationContext context) throws Exception {
    downtime =
        Downtime.restore(
            context.getOperatorStateStore(),
            "hours-seen",
            context.isRestored(),
            Downtime.now(getRuntimeContext()),
            forgetAfter);
  }

  @Override
  public void snapshotState(FunctionSnapshotContext context) throws Exception {
    downtime.snapshot(Downtime.now(getRuntimeContext()));
  }

  @Override
  public void open(OpenContext openContext) {
    ValueStateDescriptor<Integer> descriptor = new ValueStateDescriptor<>("hours-seen", Types.INT);
    descriptor.enableTimeToLive(downtime.expiringAfterWrite(forgetAfter));
    hoursSeen = getRuntimeContext().getState(descriptor);
  }

  @Override
  public void processElement(Click click, Context ctx, Collector<Click> out) throws Exception {
    if (!VisitorHours.counts(click)) {
      out.collect(click);
      return;
    }
    long time = click.ts();
    Integer seen = hoursSeen.value();
    int hours = seen == null ? 0 : seen;
    Click marked = VisitorHours.mark(click, time, hours);
    if (marked.newVisitorInHour()) {
      hoursSeen.update(hours | VisitorHours.bit(time));
    }
    out.collect(marked);
  }
}
