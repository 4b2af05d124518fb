package io.tally.bench.support;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

/** Tests for {@link Histograms}: nanoseconds in, milliseconds out, to three significant digits. */
class HistogramsTest {

  @Test
  void percentilesComeOutInMillisecondsWithinAThousandth() {
    Histogram histogram = Histograms.newHistogram();
    for (int ms = 1; ms <= 100; ms++) {
      Histograms.record(histogram, TimeUnit.MILLISECONDS.toNanos(ms));
    }
    assertThat(Histograms.ms(histogram, 50)).isCloseTo(50, within(50 * 0.001));
    assertThat(Histograms.ms(histogram, 99)).isCloseTo(99, within(99 * 0.001));
    assertThat(Histograms.maxMs(histogram)).isCloseTo(100, within(100 * 0.001));
  }

  @Test
  void valuesOutOfRangeAreClampedNotLost() {
    Histogram histogram = Histograms.newHistogram();
    Histograms.record(histogram, -5);
    Histograms.record(histogram, TimeUnit.MINUTES.toNanos(5));
    assertThat(histogram.getTotalCount()).isEqualTo(2);
    assertThat(Histograms.ms(histogram, 0)).isZero();
    assertThat(Histograms.maxMs(histogram)).isCloseTo(60_000, within(60_000 * 0.001));
  }

  @Test
  void anEmptyHistogramHasNoPercentiles() {
    Histogram histogram = Histograms.newHistogram();
    assertThat(Histograms.ms(histogram, 99)).isNaN();
    assertThat(Histograms.maxMs(histogram)).isNaN();
  }
}
