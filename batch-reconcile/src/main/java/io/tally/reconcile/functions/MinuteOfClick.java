package io.tally.reconcile.functions;

import io.tally.clickjob.records.Click;
import io.tally.clickjob.records.MinuteCount;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;

/**
 * One click as a one-click count of its minute. The minute is computed exactly as the streaming job's
 * tumbling window assigns it, so both jobs put every click in the same row.
 */
public class MinuteOfClick implements MapFunction<Click, MinuteCount> {

  private final long windowMillis;

  public MinuteOfClick(long windowMillis) {
    this.windowMillis = windowMillis;
  }

  @Override
  public MinuteCount map(Click click) {
    long minute = TimeWindow.getWindowStartWithOffset(click.ts(), 0, windowMillis);
    return click.bot() ? new MinuteCount(click.code(), minute, 0, 1) : new MinuteCount(click.code(), minute, 1, 0);
  }
}
