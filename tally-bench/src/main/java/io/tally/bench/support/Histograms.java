package io.tally.bench.support;

import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;

/** Latency histograms in nanoseconds, and their percentiles in milliseconds. */
public final class Histograms {

  /** Anything slower than this is recorded as this. */
  private static final long HIGHEST = TimeUnit.SECONDS.toNanos(60);

  private Histograms() {}

  public static Histogram newHistogram() {
    return new Histogram(HIGHEST, 3);
  }

  public static void record(Histogram histogram, long nanos) {
    histogram.recordValue(Math.max(0, Math.min(nanos, HIGHEST)));
  }

  /** The value at {@code percentile} (0–100) in milliseconds. */
  public static double ms(Histogram histogram, double percentile) {
    if (histogram.getTotalCount() == 0) {
      return Double.NaN;
    }
    return histogram.getValueAtPercentile(percentile) / 1e6;
  }

  public static double maxMs(Histogram histogram) {
    return histogram.getTotalCount() == 0 ? Double.NaN : histogram.getMaxValue() / 1e6;
  }
}
