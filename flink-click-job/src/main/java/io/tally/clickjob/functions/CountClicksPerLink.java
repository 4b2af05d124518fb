package io.tally.clickjob.functions;

import io.tally.counting.functions.Downtime;
import io.tally.counting.functions.Lateness;
import io.tally.counting.periods.ClickTally;
import io.tally.counting.periods.LinkPeriods;
import io.tally.counting.periods.MinuteTotals;
import io.tally.counting.periods.Recount;
import io.tally.counting.records.AggregateRow;
import io.tally.counting.records.DimensionCount;
import io.tally.counting.records.KeptValues;
import io.tally.counting.records.MinuteCount;
import io.tally.counting.records.PeriodRows;
import io.tally.counting.records.PeriodTotals;
import io.tally.counting.serde.LinkPeriodsSerializer;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.tuple.Tuple4;
import org.apache.flink.metrics.Counter;
import org.apache.flink.runtime.state.StateInitializationContext;
import org.apache.flink.runtime.state.StateSnapshotContext;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;

/**
 * Adds up a link's partial minute tallies ({@link PreAggregateMinutes}) into its open minutes,
 * hours and days ({@link LinkPeriods}) and writes their rows, of every table, as one stream of
 * {@link AggregateRow}s. Keyed by link code.
 *
 * <p>A link's periods live on the heap while it is busy, so a partial costs a few map lookups and
 * no state access or timer. A changed period's rows are written:
 *
 * <ul>
 *   <li>a live minute ({@link LiveOrBacklog}) on the operator's one processing-time tick, every
 *       {@code earlyFiring}, so that a click happening now shows within seconds;
 *   <li>when the watermark passes the period's end, or on the next tick when a late partial (within
 *       the allowed lateness) changes it again;
 *   <li>every other changed period, live hours and days with their breakdowns and a backlog's
 *       periods, every {@value LiveOrBacklog#ALL_CHANGES_MILLIS} ms: an open hour would otherwise
 *       show nothing until it ends, and writing it on every tick made PostgreSQL write a link's
 *       hour, day and every changed breakdown value per minute row, the bottleneck of a catch-up
 *       and most of the writes of live traffic. Each link has its own tick of those in an interval
 *       (its code's hash picks it), so that a tick writes a share of the links' roll-ups: after a
 *       catch-up every link has changed, and all of them in one tick held the live minutes behind
 *       them in the writer for seconds.
 * </ul>
 *
 * Before every checkpoint barrier each link changed since the last one is stored in keyed state
 * (RocksDB in the job), with what of it is still unwritten: a restore or rescale finds it there,
 * and a restored subtask brings its links with unwritten rows back to the heap at once. A link
 * whose rows are all written and that has not changed since the checkpoint before leaves the heap,
 * and comes back from state with its next partial. A period is dropped once its end plus the
 * allowed lateness is behind the watermark, and a link's state with its last period; a link that
 * left the heap before its periods ended leaves state {@code stateTtl} of the job's running time
 * after its last write ({@link Downtime}: a stop does not count), through RocksDB's compaction
 * filter, so that no link needs a timer.
 *
 * <p>A full breakdown keeps the values of least rank ({@link ClickTally}), whatever order partials
 * arrive in. Rows of other values may still be in the table: written by an earlier run that the
 * job, started without state, now recounts, or by this run after the checkpoint it was restored
 * from, or for a value a value of less rank has since displaced. So the first time a link's periods
 * on the heap write a full breakdown, and whenever a kept value was displaced since, its kept
 * values go first ({@link KeptValues}) and the writer clears the rest of it.
 *
 * <p>A run started without state recounts what its source rewound to ({@link Recount}): it counts
 * no minute before the recount's start, holds back the rows of the periods it recounts whole until
 * each is whole (closed, or the run caught up; clicks still in a subtask's partial then come as
 * raises, as at any time), and then replaces the stored rows with them. The recount is kept in
 * operator state, so that a restored run goes on with the recount it started with.
 */
public class CountClicksPerLink extends AbstractStreamOperator<AggregateRow>
    implements OneInputStreamOperator<MinuteTotals, AggregateRow> {

  private static final String STATE_NAME = "open-periods";

  /** {@link #writeChanges}'s turn that writes every link's changed periods. */
  private static final long EVERY_LINK = -1;

  /** {@link #writeChanges}'s turn that writes no link's roll-ups. */
  private static final long NO_LINK = -2;

  /**
   * The read side's breakdowns may hold rows this job did not write in its current life: an earlier
   * run's, or its own after the checkpoint it was restored from.
   */
  private static final boolean CLEAR_BREAKDOWNS = true;

  private final Lateness lateness;
  private final Duration stateTtl;
  private final long earlyFiringMillis;
  private final int maxDimensionValues;
  private final Recount startedWith;
  private transient ValueState<LinkPeriods> stored;
  private transient Recount recount;
  private transient Downtime downtime;

  /**
   * Links on the heap: those changed since the last checkpoint or in the interval before, and those
   * with rows still to write.
   */
  private transient Map<String, LinkPeriods> open;

  /** Links changed since the last checkpoint. */
  private transient Set<String> unstored;

  private transient long watermark;

  /** Ticks since the operator opened: which links' roll-ups a tick writes ({@link #rollupTurn}). */
  private transient long ticks;

  private transient Rows rows;
  private transient Counter minuteRows;
  private transient Counter clicksBeforeRecount;

  /**
   * @param allowedLateness how long after a period's end late partials may still change it
   * @param stateTtl how long of the job's running time a link's stored periods are kept after its
   *     last write: past the end of the longest period, a day, plus the allowed lateness. A stored
   *     link is rewritten whenever it changes.
   * @param earlyFiring how often live minutes' changed rows are written
   * @param maxDimensionValues values kept per hour and dimension ({@link
   *     io.tally.counting.CountingOptions})
   * @param recount what the run recounts if it starts without state; a restored run keeps its own
   */
  public CountClicksPerLink(
      Duration allowedLateness,
      Duration stateTtl,
      Duration earlyFiring,
      int maxDimensionValues,
      Recount recount) {
    this.lateness = new Lateness(allowedLateness.toMillis());
    this.stateTtl = stateTtl;
    this.earlyFiringMillis = earlyFiring.toMillis();
    this.maxDimensionValues = maxDimensionValues;
    this.startedWith = recount;
  }

  @Override
  public void initializeState(StateInitializationContext context) throws Exception {
    super.initializeState(context);
    downtime =
        Downtime.restore(
            context.getOperatorStateStore(),
            STATE_NAME,
            context.isRestored(),
            getProcessingTimeService().getCurrentProcessingTime(),
            stateTtl);
    ListState<Tuple4<Long, Long, Boolean, Long>> kept =
        context
            .getOperatorStateStore()
            .getUnionListState(
                new ListStateDescriptor<>(
                    "recount", Types.TUPLE(Types.LONG, Types.LONG, Types.BOOLEAN, Types.LONG)));
    recount = startedWith;
    if (context.isRestored()) {
      // Every subtask keeps the same one; a state from before recounts were kept has none.
      recount = Recount.NONE;
      for (Tuple4<Long, Long, Boolean, Long> r : kept.get()) {
        recount = new Recount(r.f0, r.f1, r.f2, r.f3);
      }
    }
    kept.update(
        List.of(
            Tuple4.of(recount.from(), recount.before(), recount.whole(), recount.caughtUpAt())));
  }

  @Override
  public void snapshotState(StateSnapshotContext context) throws Exception {
    super.snapshotState(context);
    downtime.snapshot(getProcessingTimeService().getCurrentProcessingTime());
  }

  @Override
  public void open() throws Exception {
    super.open();
    ValueStateDescriptor<LinkPeriods> descriptor =
        new ValueStateDescriptor<>(STATE_NAME, LinkPeriodsSerializer.TYPE);
    descriptor.enableTimeToLive(downtime.expiringAfterWrite(stateTtl));
    stored = getRuntimeContext().getState(descriptor);
    open = new HashMap<>();
    unstored = new HashSet<>();
    watermark = Long.MIN_VALUE;
    ticks = 0;
    rows = new Rows();
    minuteRows = getMetricGroup().counter("minuteRowsEmitted");
    clicksBeforeRecount = getMetricGroup().counter("clicksBeforeRecount");
    reloadLinksWithUnwrittenRows();
    scheduleTick();
  }

  /**
   * After a restore, brings back to the heap every link whose stored periods have rows still to
   * write, so that they are written when due. Reads this subtask's part of the state once, whatever
   * its parallelism was before.
   */
  private void reloadLinksWithUnwrittenRows() throws Exception {
    List<String> codes;
    try (Stream<Object> keys = getKeyedStateBackend().getKeys(STATE_NAME, VoidNamespace.INSTANCE)) {
      codes = keys.map(String.class::cast).toList();
    }
    for (String code : codes) {
      setCurrentKey(code);
      LinkPeriods link = stored.value();
      if (link != null && link.hasChanges()) {
        open.put(code, link);
      }
    }
  }

  @Override
  public void processElement(StreamRecord<MinuteTotals> element) throws Exception {
    MinuteTotals partial = element.getValue();
    if (!recount.counts(partial.minuteStart())) {
      clicksBeforeRecount.inc(partial.tally().clicks + partial.tally().botClicks);
      return;
    }
    String code = partial.code();
    LinkPeriods link = open.get(code);
    if (link == null) {
      link = stored.value();
      if (link == null) {
        link = new LinkPeriods();
      }
      open.put(code, link);
    }
    link.add(partial.minuteStart(), partial.tally(), maxDimensionValues, recount);
    unstored.add(code);
  }

  @Override
  public void processWatermark(Watermark mark) throws Exception {
    long previous = watermark;
    watermark = mark.getTimestamp();
    // A minute closes once the watermark reaches its last instant; hours and days end with a
    // minute.
    // Minute numbers, not starts: the first watermark's predecessor is Long.MIN_VALUE.
    if (Math.floorDiv(closedBy(watermark), LinkPeriods.MINUTE)
        > Math.floorDiv(closedBy(previous), LinkPeriods.MINUTE)) {
      writeChanges(NO_LINK, Long.MAX_VALUE);
      long droppedBefore = lateness.settledBy(watermark);
      for (Iterator<Map.Entry<String, LinkPeriods>> it = open.entrySet().iterator();
          it.hasNext(); ) {
        Map.Entry<String, LinkPeriods> link = it.next();
        if (link.getValue().dropEndedBy(droppedBefore)) {
          unstored.add(link.getKey());
          if (link.getValue().isEmpty()) {
            // Still unstored: the next checkpoint clears its state.
            it.remove();
          }
        }
      }
    }
    super.processWatermark(mark);
  }

  @Override
  public void prepareSnapshotPreBarrier(long checkpointId) throws Exception {
    storeChangedLinks();
    super.prepareSnapshotPreBarrier(checkpointId);
  }

  @Override
  public void finish() throws Exception {
    // The input has ended: every period is as whole as it will get.
    watermark = Long.MAX_VALUE;
    writeChanges(EVERY_LINK, Long.MIN_VALUE);
    super.finish();
  }

  /**
   * Stores every link changed since the last checkpoint, unwritten rows and all. A link left
   * unchanged since, all of its rows written, leaves the heap.
   */
  private void storeChangedLinks() throws Exception {
    open.entrySet()
        .removeIf(link -> !unstored.contains(link.getKey()) && !link.getValue().hasChanges());
    for (String code : unstored) {
      LinkPeriods link = open.get(code);
      setCurrentKey(code);
      if (link == null) {
        stored.clear();
      } else {
        stored.update(link);
      }
    }
    unstored.clear();
  }

  /**
   * Writes the rows of every open link's periods that are due ({@link LinkPeriods.Due}): those
   * closed by the watermark and the minutes that changed in a minute ending at or after {@code
   * liveFrom}; and every changed period of the links whose turn {@code turn} is ({@link
   * #rollupTurn}), of every link ({@link #EVERY_LINK}) or of none ({@link #NO_LINK}). Then, if it
   * wrote any, {@link AggregateRow#END_OF_ROUND}, so that the writer sends them at once.
   */
  private void writeChanges(long turn, long liveFrom) {
    long wholeBy = recount.wholeBy(watermark, closedBy(watermark));
    LinkPeriods.Due live =
        new LinkPeriods.Due(closedBy(watermark), liveFrom, Long.MAX_VALUE, wholeBy);
    LinkPeriods.Due all =
        new LinkPeriods.Due(Long.MAX_VALUE, Long.MIN_VALUE, Long.MIN_VALUE, wholeBy);
    int turns = rollupTurns();
    boolean wrote = false;
    for (Map.Entry<String, LinkPeriods> link : open.entrySet()) {
      LinkPeriods.Due due =
          turn == EVERY_LINK || rollupTurn(link.getKey(), turns) == turn ? all : live;
      if (link.getValue().writeChanges(link.getKey(), due, CLEAR_BREAKDOWNS, rows)) {
        unstored.add(link.getKey());
        wrote = true;
      }
    }
    if (wrote) {
      output.collect(new StreamRecord<>(AggregateRow.END_OF_ROUND));
    }
  }

  /**
   * The operator's one timer: every {@code earlyFiring}, the live minutes' changed rows and the
   * closed periods' that late partials changed, and every changed row of the links whose turn it
   * is, each link's once in the ticks of {@value LiveOrBacklog#ALL_CHANGES_MILLIS} ms, so that open
   * hours and days show progress too.
   */
  private void scheduleTick() {
    long now = getProcessingTimeService().getCurrentProcessingTime();
    getProcessingTimeService()
        .registerTimer(
            LiveOrBacklog.ceil(now + 1, earlyFiringMillis),
            firedAt -> {
              long time = getProcessingTimeService().getCurrentProcessingTime();
              writeChanges(ticks++ % rollupTurns(), time - LiveOrBacklog.LIVE_LAG_MILLIS);
              scheduleTick();
            });
  }

  /** Ticks in {@value LiveOrBacklog#ALL_CHANGES_MILLIS} ms: each link's roll-ups have one. */
  private int rollupTurns() {
    return (int) Math.max(1, LiveOrBacklog.ALL_CHANGES_MILLIS / earlyFiringMillis);
  }

  /**
   * The tick, of {@code turns}, on which {@code code}'s hours, days and backlog minutes are
   * written: spread by the code's hash, the same on every subtask and after a restore. The hash is
   * mixed first: {@link String#hashCode} modulo 15 is about the sum of the code's characters, the
   * same for every anagram.
   */
  static int rollupTurn(String code, int turns) {
    return Math.floorMod((int) ((code.hashCode() * 0x9E3779B97F4A7C15L) >>> 32), turns);
  }

  /**
   * Periods ending at or before this are closed at {@code watermark}: it has reached their last
   * instant.
   */
  private static long closedBy(long watermark) {
    return watermark == Long.MIN_VALUE || watermark == Long.MAX_VALUE ? watermark : watermark + 1;
  }

  /** The period rows, as aggregate rows. */
  private final class Rows implements PeriodRows {

    @Override
    public void minute(MinuteCount row) {
      minuteRows.inc();
      output.collect(new StreamRecord<>(AggregateRow.of(row)));
    }

    @Override
    public void recountedMinute(MinuteCount row) {
      minuteRows.inc();
      output.collect(new StreamRecord<>(AggregateRow.replacing(row)));
    }

    @Override
    public void recountedHour(PeriodTotals row) {
      output.collect(new StreamRecord<>(AggregateRow.replacingHour(row)));
    }

    @Override
    public void recountedDay(PeriodTotals row) {
      output.collect(new StreamRecord<>(AggregateRow.replacingDay(row)));
    }

    @Override
    public void hour(PeriodTotals row) {
      output.collect(new StreamRecord<>(AggregateRow.hourOf(row)));
    }

    @Override
    public void day(PeriodTotals row) {
      output.collect(new StreamRecord<>(AggregateRow.dayOf(row)));
    }

    @Override
    public void dimension(DimensionCount row) {
      output.collect(new StreamRecord<>(AggregateRow.hourOf(row)));
    }

    @Override
    public void dayDimension(DimensionCount row) {
      output.collect(new StreamRecord<>(AggregateRow.dayOf(row)));
    }

    @Override
    public void keptInHour(KeptValues kept) {
      output.collect(new StreamRecord<>(AggregateRow.hourOf(kept)));
    }

    @Override
    public void keptInDay(KeptValues kept) {
      output.collect(new StreamRecord<>(AggregateRow.dayOf(kept)));
    }
  }
}
