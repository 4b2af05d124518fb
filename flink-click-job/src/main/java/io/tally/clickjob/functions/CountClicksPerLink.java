package io.tally.clickjob.functions;

import io.tally.clickjob.io.LinkPeriodsSerializer;
import io.tally.clickjob.records.DimensionCount;
import io.tally.clickjob.records.LinkPeriods;
import io.tally.clickjob.records.MinuteCount;
import io.tally.clickjob.records.MinuteTotals;
import io.tally.clickjob.records.PeriodRows;
import io.tally.clickjob.records.PeriodTotals;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.util.OutputTag;

/**
 * Adds up a link's partial minute tallies ({@link PreAggregateMinutes}) into its open minutes, hours and
 * days ({@link LinkPeriods}) and writes their rows: the minute rows as the main output, hours, days and
 * dimension counts to {@link #HOURS}, {@link #DAYS} and {@link #DIMENSIONS}. Keyed by link code.
 *
 * <p>A link's periods live on the heap while it is busy, so a partial costs a few map lookups and no state
 * access or timer. A changed period's rows are written:
 * <ul>
 *   <li>on the operator's one processing-time tick, every {@code earlyFiring}, when the minute that changed
 *       it is live ({@link Liveness}), so that a click happening now shows within seconds;
 *   <li>when the watermark passes the period's end, or later when a late partial (within the allowed
 *       lateness) changes it again;
 *   <li>before every checkpoint barrier, for everything still unwritten.
 * </ul>
 * At the barrier every link changed since the last checkpoint is also stored in keyed state (RocksDB in
 * the job), where a restore or rescale finds it; a link untouched since the checkpoint before leaves the
 * heap, and comes back from state when its next partial does. Since all rows are written at the barrier,
 * the state holds only written periods and nothing is left to write after a restore. A period is dropped
 * once its end plus the allowed lateness is behind the watermark; a link idle for {@link #STATE_TTL}
 * leaves state through RocksDB's compaction filter, which needs no timer.
 */
public class CountClicksPerLink extends AbstractStreamOperator<MinuteCount>
    implements OneInputStreamOperator<MinuteTotals, MinuteCount> {

  public static final OutputTag<PeriodTotals> HOURS = new OutputTag<>("hour-totals") {};
  public static final OutputTag<PeriodTotals> DAYS = new OutputTag<>("day-totals") {};
  public static final OutputTag<DimensionCount> DIMENSIONS = new OutputTag<>("dimension-counts") {};

  /**
   * How long after its last write a link's stored periods are kept: past the end of the longest period, a
   * day, plus any allowed lateness of less than a day. A stored link is rewritten whenever it changes.
   */
  static final Duration STATE_TTL = Duration.ofDays(2);

  private final long windowMillis;
  private final long allowedLatenessMillis;
  private final long earlyFiringMillis;
  private transient ValueState<LinkPeriods> stored;
  /** Links on the heap: those changed since the last checkpoint, and those changed in the interval before. */
  private transient Map<String, LinkPeriods> open;
  /** Links changed since the last checkpoint. */
  private transient Set<String> unstored;
  private transient long watermark;
  private transient Rows rows;
  private transient Counter minuteRows;

  /**
   * @param window the counting window (a minute)
   * @param allowedLateness how long after a period's end late partials may still change it
   * @param earlyFiring how often live periods' changed rows are written
   */
  public CountClicksPerLink(Duration window, Duration allowedLateness, Duration earlyFiring) {
    this.windowMillis = window.toMillis();
    this.allowedLatenessMillis = allowedLateness.toMillis();
    this.earlyFiringMillis = earlyFiring.toMillis();
  }

  @Override
  public void open() throws Exception {
    super.open();
    ValueStateDescriptor<LinkPeriods> descriptor = new ValueStateDescriptor<>("open-periods", LinkPeriodsSerializer.TYPE);
    descriptor.enableTimeToLive(ExpiringState.afterWrite(STATE_TTL));
    stored = getRuntimeContext().getState(descriptor);
    open = new HashMap<>();
    unstored = new HashSet<>();
    watermark = Long.MIN_VALUE;
    rows = new Rows();
    minuteRows = getMetricGroup().counter("minuteRowsEmitted");
    scheduleTick();
  }

  @Override
  public void processElement(StreamRecord<MinuteTotals> element) throws Exception {
    MinuteTotals partial = element.getValue();
    String code = partial.code();
    LinkPeriods link = open.get(code);
    if (link == null) {
      link = stored.value();
      if (link == null) {
        link = new LinkPeriods();
      } else {
        link.dropEndedBy(droppedBefore());
      }
      open.put(code, link);
    }
    link.add(partial.minuteStart(), partial.minuteStart() + windowMillis, partial.tally());
    unstored.add(code);
  }

  @Override
  public void processWatermark(Watermark mark) throws Exception {
    long previous = watermark;
    watermark = mark.getTimestamp();
    // A minute closes once the watermark reaches its last instant; hours and days end with a minute.
    if (Math.floorDiv(closedBy(watermark), windowMillis) > Math.floorDiv(closedBy(previous), windowMillis)) {
      for (String code : unstored) {
        LinkPeriods link = open.get(code);
        if (link != null) {
          link.writeChanges(code, closedBy(watermark), Long.MAX_VALUE, rows);
          link.dropEndedBy(droppedBefore());
          if (link.isEmpty()) {
            // Still unstored: the next checkpoint clears its state.
            open.remove(code);
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
    for (String code : unstored) {
      LinkPeriods link = open.get(code);
      if (link != null) {
        link.writeAllChanges(code, rows);
      }
    }
    super.finish();
  }

  /**
   * Writes and stores every link changed since the last checkpoint. The others leave the heap, their state
   * trimmed of the periods that ended.
   */
  private void storeChangedLinks() throws Exception {
    long droppedBefore = droppedBefore();
    for (Iterator<Map.Entry<String, LinkPeriods>> it = open.entrySet().iterator(); it.hasNext(); ) {
      Map.Entry<String, LinkPeriods> link = it.next();
      if (!unstored.contains(link.getKey())) {
        it.remove();
        if (link.getValue().dropEndedBy(droppedBefore)) {
          store(link.getKey(), link.getValue());
        }
      }
    }
    for (String code : unstored) {
      LinkPeriods link = open.get(code);
      if (link != null) {
        link.writeAllChanges(code, rows);
        link.dropEndedBy(droppedBefore);
      }
      store(code, link);
    }
    unstored.clear();
  }

  private void store(String code, LinkPeriods link) throws Exception {
    setCurrentKey(code);
    if (link == null || link.isEmpty()) {
      stored.clear();
      open.remove(code);
    } else {
      stored.update(link);
    }
  }

  private void scheduleTick() {
    long now = getProcessingTimeService().getCurrentProcessingTime();
    getProcessingTimeService().registerTimer(Liveness.ceil(now + 1, earlyFiringMillis), firedAt -> {
      long liveFrom = firedAt - Liveness.LIVE_LAG_MILLIS;
      for (String code : unstored) {
        LinkPeriods link = open.get(code);
        if (link != null) {
          link.writeChanges(code, closedBy(watermark), liveFrom, rows);
        }
      }
      scheduleTick();
    });
  }

  /** Periods ending at or before this are closed at {@code watermark}: it has reached their last instant. */
  private static long closedBy(long watermark) {
    return watermark == Long.MIN_VALUE || watermark == Long.MAX_VALUE ? watermark : watermark + 1;
  }

  /** Periods ending at or before this can change no more: not even a late click may reach them. */
  private long droppedBefore() {
    long closedBy = closedBy(watermark);
    return closedBy == Long.MIN_VALUE || closedBy == Long.MAX_VALUE ? closedBy : closedBy - allowedLatenessMillis;
  }

  /** The period rows, each to its own output. */
  private final class Rows implements PeriodRows {

    @Override
    public void minute(MinuteCount row) {
      minuteRows.inc();
      output.collect(new StreamRecord<>(row));
    }

    @Override
    public void hour(PeriodTotals row) {
      output.collect(HOURS, new StreamRecord<>(row));
    }

    @Override
    public void day(PeriodTotals row) {
      output.collect(DAYS, new StreamRecord<>(row));
    }

    @Override
    public void dimension(DimensionCount row) {
      output.collect(DIMENSIONS, new StreamRecord<>(row));
    }
  }
}
