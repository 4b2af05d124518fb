package io.tally.clickjob.functions;

import io.tally.clickjob.records.Click;
import java.time.Duration;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

/**
 * Marks a human click that is its visitor's first on the link in its hour, and in its UTC day, so that the
 * windows count unique visitors exactly by adding marks. Keyed by link code, after duplicates are dropped;
 * the state is one entry per (day, visitor hash) holding a bit per hour of the day in which the visitor
 * clicked, and expires {@link #TTL} after its last change.
 *
 * <p>A click the window will refuse as late is passed on unmarked: marking it would use up its visitor's
 * first click of the hour on a click that is never counted.
 */
public class MarkNewVisitors extends KeyedProcessFunction<String, Click, Click> {

  /** A day's entries are needed until its last late click; two days leave room for a restart. */
  public static final Duration TTL = Duration.ofHours(48);

  private final long windowMillis;
  private final long allowedLatenessMillis;
  private transient MapState<String, Integer> hoursSeen;

  /**
   * @param window the counting window, to tell late clicks as the window operator does
   * @param allowedLateness the window's allowed lateness
   */
  public MarkNewVisitors(Duration window, Duration allowedLateness) {
    this.windowMillis = window.toMillis();
    this.allowedLatenessMillis = allowedLateness.toMillis();
  }

  @Override
  public void open(OpenContext openContext) {
    MapStateDescriptor<String, Integer> descriptor =
        new MapStateDescriptor<>("visitor-hours-seen", Types.STRING, Types.INT);
    descriptor.enableTimeToLive(ExpiringState.afterWrite(TTL));
    hoursSeen = getRuntimeContext().getMapState(descriptor);
  }

  @Override
  public void processElement(Click click, Context ctx, Collector<Click> out) throws Exception {
    if (!VisitorHours.counts(click) || late(click.ts(), ctx.timerService().currentWatermark())) {
      out.collect(click);
      return;
    }
    String entry = VisitorHours.entry(click);
    Integer seen = hoursSeen.get(entry);
    int hours = seen == null ? 0 : seen;
    Click marked = VisitorHours.mark(click, hours);
    if (marked.newVisitorInHour()) {
      hoursSeen.put(entry, hours | VisitorHours.bit(click));
    }
    out.collect(marked);
  }

  /** The window operator's test: the window's last instant plus the lateness is behind the watermark. */
  private boolean late(long ts, long watermark) {
    long windowEnd = Math.floorDiv(ts, windowMillis) * windowMillis + windowMillis;
    return windowEnd - 1 + allowedLatenessMillis <= watermark;
  }
}
