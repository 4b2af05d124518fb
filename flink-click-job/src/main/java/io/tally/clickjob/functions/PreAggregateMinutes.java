package io.tally.clickjob.functions;

import io.tally.counting.periods.ClickTally;
import io.tally.counting.periods.LinkPeriods;
import io.tally.counting.periods.MinuteTotals;
import io.tally.counting.records.Click;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;

/**
 * Adds up a subtask's clicks per (link, minute) in memory and hands the partial tallies on, so that
 * the link-keyed counting ({@link CountClicksPerLink}) receives a few partials instead of every
 * click: a viral link's clicks are added up on every subtask (ADR-005).
 *
 * <p>When a minute's tally is sent:
 *
 * <ul>
 *   <li>before the watermark that reaches the minute's end is passed on, so the counting has it
 *       when it closes the minute (a click within the allowed lateness, after that, goes before the
 *       next watermark and the counting writes the minute again with the full total);
 *   <li>every {@code liveMillis} of processing time while the minute is live ({@link
 *       LiveOrBacklog}), so a click happening now reaches the counting's next early write;
 *   <li>before every checkpoint barrier ({@link #prepareSnapshotPreBarrier}): nothing is held
 *       across a checkpoint, so the counting's state holds exactly the clicks before it and this
 *       operator has no state to restore or rescale;
 *   <li>all at once when {@link #MAX_OPEN_TALLIES} are open, which bounds a backlog's memory, and
 *       when the job finishes ({@link #finish}), as a bounded run does;
 *   <li>on its own as soon as one tally holds as many breakdown values as an hour keeps in all its
 *       dimensions, or {@link #MAX_VISITOR_KEYS} visitors' keys: a flood of made-up referrers costs
 *       no more memory here than in the counting behind the shuffle. The tally is sent whole, never
 *       folded into {@code (other)}, so a value the counting keeps still gets every one of its
 *       clicks.
 * </ul>
 *
 * A backlog's minute thus crosses the network about once per subtask, not once per click.
 *
 * <p>A click is added to the minute of its own {@code ts}; none that comes here is too late to
 * count ({@link io.tally.counting.functions.DropDuplicatesByMinute} judged that).
 */
public class PreAggregateMinutes extends AbstractStreamOperator<MinuteTotals>
    implements OneInputStreamOperator<Click, MinuteTotals> {

  /** More open (link, minute) tallies than this are sent at once. */
  static final int MAX_OPEN_TALLIES = 20_000;

  /** A tally with this many day-visitor keys is sent on its own. */
  static final int MAX_VISITOR_KEYS = 1024;

  private final long liveMillis;
  private final long maxSlots;

  /** Open tallies by minute start, then by link code. */
  private transient TreeMap<Long, Map<String, ClickTally>> open;

  private transient int openTallies;
  private transient StreamRecord<MinuteTotals> reused;
  private transient Counter partialsSent;

  /**
   * @param liveMillis how often a live minute's tallies are sent
   * @param maxValues the values an hour keeps per dimension ({@link
   *     io.tally.counting.CountingOptions}); a tally with as many in all is sent on its own
   */
  public PreAggregateMinutes(long liveMillis, int maxValues) {
    this.liveMillis = liveMillis;
    this.maxSlots = (long) maxValues * ClickTally.DIMENSIONS.length;
  }

  @Override
  public void open() throws Exception {
    super.open();
    open = new TreeMap<>();
    reused = new StreamRecord<>(null);
    partialsSent = getMetricGroup().counter("partialTalliesSent");
    scheduleLiveSend();
  }

  @Override
  public void processElement(StreamRecord<Click> element) {
    Click click = element.getValue();
    long minuteStart = LinkPeriods.minuteOf(click.ts());
    Map<String, ClickTally> links = open.get(minuteStart);
    if (links == null) {
      links = new HashMap<>();
      open.put(minuteStart, links);
    }
    ClickTally tally = links.get(click.code());
    if (tally == null) {
      tally = new ClickTally();
      links.put(click.code(), tally);
      openTallies++;
    }
    tally.addToPartial(click);
    if (tally.size >= maxSlots || tally.dayVisitorKeyCount >= MAX_VISITOR_KEYS) {
      send(minuteStart, click.code(), tally);
      links.remove(click.code());
      openTallies--;
    } else if (openTallies >= MAX_OPEN_TALLIES) {
      sendMinutesBefore(Long.MAX_VALUE);
    }
  }

  @Override
  public void processWatermark(Watermark mark) throws Exception {
    // A minute closes once the watermark reaches its last instant, start + MINUTE - 1.
    sendMinutesBefore(mark.getTimestamp() - LinkPeriods.MINUTE + 2);
    super.processWatermark(mark);
  }

  @Override
  public void prepareSnapshotPreBarrier(long checkpointId) throws Exception {
    sendMinutesBefore(Long.MAX_VALUE);
    super.prepareSnapshotPreBarrier(checkpointId);
  }

  @Override
  public void finish() throws Exception {
    sendMinutesBefore(Long.MAX_VALUE);
    super.finish();
  }

  private void scheduleLiveSend() {
    long now = getProcessingTimeService().getCurrentProcessingTime();
    getProcessingTimeService()
        .registerTimer(
            LiveOrBacklog.ceil(now + 1, liveMillis),
            firedAt -> {
              sendLiveMinutes(firedAt);
              scheduleLiveSend();
            });
  }

  private void sendLiveMinutes(long now) {
    for (Iterator<Map.Entry<Long, Map<String, ClickTally>>> it =
            open.descendingMap().entrySet().iterator();
        it.hasNext(); ) {
      Map.Entry<Long, Map<String, ClickTally>> minute = it.next();
      if (!LiveOrBacklog.live(minute.getKey() + LinkPeriods.MINUTE, now)) {
        return;
      }
      send(minute.getKey(), minute.getValue());
      it.remove();
    }
  }

  /**
   * Sends the tallies of every minute starting before {@code before}, each stamped with its
   * minute's start.
   */
  private void sendMinutesBefore(long before) {
    while (!open.isEmpty() && open.firstKey() < before) {
      Map.Entry<Long, Map<String, ClickTally>> minute = open.pollFirstEntry();
      send(minute.getKey(), minute.getValue());
    }
  }

  private void send(long minuteStart, Map<String, ClickTally> links) {
    for (Map.Entry<String, ClickTally> link : links.entrySet()) {
      send(minuteStart, link.getKey(), link.getValue());
    }
    openTallies -= links.size();
  }

  private void send(long minuteStart, String code, ClickTally tally) {
    output.collect(reused.replace(new MinuteTotals(code, minuteStart, tally), minuteStart));
    partialsSent.inc();
  }
}
