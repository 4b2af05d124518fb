package io.tally.clickjob.functions;

import io.tally.clickjob.records.Click;
import io.tally.clickjob.records.ClickTally;
import io.tally.clickjob.records.MinuteTotals;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.util.OutputTag;

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
 *   <li>every {@code liveMillis} of processing time while the minute is live ({@link Liveness}), so
 *       a click happening now reaches the counting's next early write;
 *   <li>before every checkpoint barrier ({@link #prepareSnapshotPreBarrier}): nothing is held
 *       across a checkpoint, so the counting's state holds exactly the clicks before it and this
 *       operator has no state to restore or rescale;
 *   <li>all at once when {@link #MAX_OPEN_TALLIES} are open, which bounds a backlog's memory, and
 *       when the job finishes ({@link #finish}), as a bounded run does.
 * </ul>
 *
 * A backlog's minute thus crosses the network about once per subtask, not once per click.
 *
 * <p>A click too late to count ({@link Lateness}) is sent to {@code lateClicks} instead, to become
 * a dead letter.
 */
public class PreAggregateMinutes extends AbstractStreamOperator<MinuteTotals>
    implements OneInputStreamOperator<Click, MinuteTotals> {

  /** More open (link, minute) tallies than this are sent at once. */
  static final int MAX_OPEN_TALLIES = 20_000;

  private final long windowMillis;
  private final Lateness lateness;
  private final long liveMillis;
  private final OutputTag<Click> lateClicks;

  /** Open tallies by minute start, then by link code. */
  private transient TreeMap<Long, Map<String, ClickTally>> open;

  private transient int openTallies;
  private transient long watermark;
  private transient StreamRecord<MinuteTotals> reused;
  private transient Counter partialsSent;

  /**
   * @param window the counting window
   * @param allowedLateness how long after a minute's end its clicks still count
   * @param liveMillis how often a live minute's tallies are sent
   * @param lateClicks where clicks too late to count go
   */
  public PreAggregateMinutes(
      long window, long allowedLateness, long liveMillis, OutputTag<Click> lateClicks) {
    this.windowMillis = window;
    this.lateness = new Lateness(window, allowedLateness);
    this.liveMillis = liveMillis;
    this.lateClicks = lateClicks;
  }

  @Override
  public void open() throws Exception {
    super.open();
    open = new TreeMap<>();
    watermark = Long.MIN_VALUE;
    reused = new StreamRecord<>(null);
    partialsSent = getMetricGroup().counter("partialTalliesSent");
    scheduleLiveSend();
  }

  @Override
  public void processElement(StreamRecord<Click> element) {
    Click click = element.getValue();
    if (lateness.tooLate(element.getTimestamp(), watermark)) {
      output.collect(lateClicks, element);
      return;
    }
    long windowStart = Math.floorDiv(element.getTimestamp(), windowMillis) * windowMillis;
    Map<String, ClickTally> links = open.get(windowStart);
    if (links == null) {
      links = new HashMap<>();
      open.put(windowStart, links);
    }
    ClickTally tally = links.get(click.code());
    if (tally == null) {
      tally = new ClickTally();
      links.put(click.code(), tally);
      openTallies++;
    }
    tally.addToPartial(click);
    if (openTallies >= MAX_OPEN_TALLIES) {
      sendMinutesBefore(Long.MAX_VALUE);
    }
  }

  @Override
  public void processWatermark(Watermark mark) throws Exception {
    // A minute closes once the watermark reaches its last instant, start + window - 1.
    sendMinutesBefore(mark.getTimestamp() - windowMillis + 2);
    watermark = mark.getTimestamp();
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
            Liveness.ceil(now + 1, liveMillis),
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
      if (!Liveness.live(minute.getKey() + windowMillis, now)) {
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
      output.collect(
          reused.replace(
              new MinuteTotals(link.getKey(), minuteStart, link.getValue()), minuteStart));
    }
    partialsSent.inc(links.size());
    openTallies -= links.size();
  }
}
