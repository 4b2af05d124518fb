package io.tally.clickjob.functions;

import io.tally.clickjob.records.Click;
import io.tally.clickjob.records.LinkShard;
import java.time.Duration;
import java.util.Iterator;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

/**
 * Marks a human click that is its visitor's first on the link in its hour, and in its UTC day, so that the
 * windows count unique visitors exactly by adding marks. Keyed by link shard ({@link LinkShards}), which
 * holds every click of a visitor on the link, after duplicates are dropped;
 * the state is one entry per (day, visitor hash) holding a bit per hour of the day in which the visitor
 * clicked, removed when its day has ended in event time (below).
 *
 * <p>A click the window will refuse as late is passed on unmarked: marking it would use up its visitor's
 * first click of the hour on a click that is never counted.
 *
 * <p>A day's entries are removed by an event-time timer once the day's last late click can no longer
 * come (its end plus the allowed lateness), on the same clock as the windows they mark for: a job restored
 * after a long outage still knows who clicked in the hours and days it has open. A TTL of {@link #TTL}
 * only backs that up, for a link whose watermark stopped.
 */
public class MarkNewVisitors extends KeyedProcessFunction<LinkShard, Click, Click> {

  /** Backstop for entries whose day never ends in event time; the timers remove them long before. */
  public static final Duration TTL = Duration.ofDays(7);

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
    long time = ctx.timestamp();
    if (!VisitorHours.counts(click) || late(time, ctx.timerService().currentWatermark())) {
      out.collect(click);
      return;
    }
    String entry = VisitorHours.entry(click, time);
    Integer seen = hoursSeen.get(entry);
    int hours = seen == null ? 0 : seen;
    Click marked = VisitorHours.mark(click, time, hours);
    if (marked.newVisitorInHour()) {
      hoursSeen.put(entry, hours | VisitorHours.bit(time));
    }
    if (marked.newVisitorInDay()) {
      ctx.timerService().registerEventTimeTimer(Math.floorDiv(time, RollUpHoursAndDays.DAY) * RollUpHoursAndDays.DAY + RollUpHoursAndDays.DAY + allowedLatenessMillis);
    }
    out.collect(marked);
  }

  @Override
  public void onTimer(long timestamp, OnTimerContext ctx, Collector<Click> out) throws Exception {
    long lastEndedDay = Math.floorDiv(timestamp - allowedLatenessMillis, RollUpHoursAndDays.DAY) - 1;
    for (Iterator<String> it = hoursSeen.keys().iterator(); it.hasNext(); ) {
      String entry = it.next();
      if (Long.parseLong(entry.substring(0, entry.indexOf(':'))) <= lastEndedDay) {
        it.remove();
      }
    }
    if (hoursSeen.isEmpty()) {
      hoursSeen.clear();
    }
  }

  /** The window operator's test: the window's last instant plus the lateness is behind the watermark. */
  private boolean late(long ts, long watermark) {
    long windowEnd = Math.floorDiv(ts, windowMillis) * windowMillis + windowMillis;
    return windowEnd - 1 + allowedLatenessMillis <= watermark;
  }
}
