package io.tally.clickjob.functions;

import io.tally.clickjob.records.Click;
import io.tally.clickjob.records.ClickTally;
import io.tally.clickjob.records.MinuteTotals;
import java.util.HashMap;
import java.util.Map;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.BoundedOneInput;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.util.OutputTag;

/**
 * Adds up a subtask's clicks per (link, minute) in memory and hands the partial tallies on, so that the
 * link-keyed minute window receives a few partials instead of every click: a viral link's clicks are
 * counted on every subtask, and the window's per-click state access and timers are gone (ADR-005).
 *
 * <p>Nothing is held across a checkpoint: the partials are sent before the barrier
 * ({@link #prepareSnapshotPreBarrier}), so the window's state counts exactly the clicks before it, and
 * the operator has no state to restore or rescale. They are also sent before every watermark is passed
 * on, so a partial never reaches the window after the watermark that closes its minute, and every
 * {@code flushMillis} of processing time, which bounds how long a click waits when the watermark stalls.
 *
 * <p>A click its window has closed for good (its end plus the allowed lateness behind the watermark, the
 * window operator's own test) is sent to {@link #lateClicks} instead, to become a dead letter.
 */
public class PreAggregateMinutes extends AbstractStreamOperator<MinuteTotals>
    implements OneInputStreamOperator<Click, MinuteTotals>, BoundedOneInput {

  /** More open (link, minute) tallies than this are sent at once: bounds the memory a backlog takes. */
  static final int MAX_OPEN_TALLIES = 20_000;

  private final long windowMillis;
  private final long allowedLatenessMillis;
  private final long flushMillis;
  private final OutputTag<Click> lateClicks;
  private transient Map<String, Map<Long, ClickTally>> open;
  private transient int openTallies;
  private transient long watermark;
  private transient Counter partialsSent;

  /**
   * @param window the counting window
   * @param allowedLateness the window's allowed lateness
   * @param flushMillis the longest a click waits in memory when no watermark comes
   * @param lateClicks where clicks too late for their window go
   */
  public PreAggregateMinutes(long window, long allowedLateness, long flushMillis, OutputTag<Click> lateClicks) {
    this.windowMillis = window;
    this.allowedLatenessMillis = allowedLateness;
    this.flushMillis = flushMillis;
    this.lateClicks = lateClicks;
  }

  @Override
  public void open() throws Exception {
    super.open();
    open = new HashMap<>();
    watermark = Long.MIN_VALUE;
    partialsSent = getMetricGroup().counter("partialTalliesSent");
    scheduleFlush();
  }

  @Override
  public void processElement(StreamRecord<Click> element) {
    Click click = element.getValue();
    long time = element.getTimestamp();
    long windowStart = Math.floorDiv(time, windowMillis) * windowMillis;
    if (windowStart + windowMillis - 1 + allowedLatenessMillis <= watermark) {
      output.collect(lateClicks, element);
      return;
    }
    Map<Long, ClickTally> minutes = open.computeIfAbsent(click.code(), code -> new HashMap<>(4));
    ClickTally tally = minutes.get(windowStart);
    if (tally == null) {
      tally = new ClickTally();
      minutes.put(windowStart, tally);
      openTallies++;
    }
    tally.add(click);
    if (openTallies >= MAX_OPEN_TALLIES) {
      sendAll();
    }
  }

  @Override
  public void processWatermark(Watermark mark) throws Exception {
    sendAll();
    watermark = mark.getTimestamp();
    super.processWatermark(mark);
  }

  @Override
  public void prepareSnapshotPreBarrier(long checkpointId) throws Exception {
    sendAll();
    super.prepareSnapshotPreBarrier(checkpointId);
  }

  @Override
  public void endInput() {
    sendAll();
  }

  @Override
  public void finish() throws Exception {
    sendAll();
    super.finish();
  }

  private void scheduleFlush() {
    long now = getProcessingTimeService().getCurrentProcessingTime();
    getProcessingTimeService().registerTimer(now + flushMillis, firedAt -> {
      sendAll();
      scheduleFlush();
    });
  }

  /** Sends every open tally, each stamped with its minute's start, the time the window assigns it by. */
  private void sendAll() {
    if (openTallies == 0) {
      return;
    }
    StreamRecord<MinuteTotals> record = new StreamRecord<>(null);
    for (Map.Entry<String, Map<Long, ClickTally>> link : open.entrySet()) {
      for (Map.Entry<Long, ClickTally> minute : link.getValue().entrySet()) {
        output.collect(record.replace(new MinuteTotals(link.getKey(), minute.getKey(), minute.getValue()), minute.getKey()));
      }
    }
    partialsSent.inc(openTallies);
    open.clear();
    openTallies = 0;
  }
}
