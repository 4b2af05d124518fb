package io.tally.clickjob.functions;

import org.apache.flink.streaming.api.windowing.triggers.Trigger;
import org.apache.flink.streaming.api.windowing.triggers.TriggerResult;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;

/**
 * Fires an event-time window when the watermark passes its end, as Flink's event-time trigger does, and
 * also every {@code interval} of processing time while new clicks arrive, so that an open minute shows up
 * within seconds. Early firings emit partial totals; the upserts never lower a row, so the final firing
 * simply raises it.
 *
 * <p>The early timer is set at the next multiple of {@code interval} rather than {@code interval} after the
 * click, so that every click of a window in one interval asks for the same timer: the timer service keeps
 * one, and the trigger needs no state of its own. A window of a backlog (see {@link Liveness}) fires only
 * when the watermark passes it.
 */
public class EarlyFiringTrigger extends Trigger<Object, TimeWindow> {

  private final long intervalMillis;

  public EarlyFiringTrigger(long intervalMillis) {
    if (intervalMillis <= 0) {
      throw new IllegalArgumentException("early-firing interval must be positive, not " + intervalMillis);
    }
    this.intervalMillis = intervalMillis;
  }

  @Override
  public TriggerResult onElement(Object element, long timestamp, TimeWindow window, TriggerContext ctx) {
    if (window.maxTimestamp() <= ctx.getCurrentWatermark()) {
      // A late click within the allowed lateness: its minute is settled again at once.
      return TriggerResult.FIRE;
    }
    ctx.registerEventTimeTimer(window.maxTimestamp());
    long now = ctx.getCurrentProcessingTime();
    if (Liveness.live(window.getEnd(), now)) {
      ctx.registerProcessingTimeTimer(nextBoundary(now));
    }
    return TriggerResult.CONTINUE;
  }

  @Override
  public TriggerResult onProcessingTime(long time, TimeWindow window, TriggerContext ctx) {
    return TriggerResult.FIRE;
  }

  @Override
  public TriggerResult onEventTime(long time, TimeWindow window, TriggerContext ctx) {
    if (time != window.maxTimestamp()) {
      return TriggerResult.CONTINUE;
    }
    // Settled now: an early firing still pending would only repeat these totals.
    ctx.deleteProcessingTimeTimer(nextBoundary(ctx.getCurrentProcessingTime()));
    return TriggerResult.FIRE;
  }

  @Override
  public void clear(TimeWindow window, TriggerContext ctx) {
    ctx.deleteEventTimeTimer(window.maxTimestamp());
    ctx.deleteProcessingTimeTimer(nextBoundary(ctx.getCurrentProcessingTime()));
  }

  private long nextBoundary(long now) {
    return (now / intervalMillis + 1) * intervalMillis;
  }

  @Override
  public String toString() {
    return "EarlyFiringTrigger(" + intervalMillis + " ms)";
  }
}
