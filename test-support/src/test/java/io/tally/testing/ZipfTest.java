package io.tally.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** Tests for {@link Zipf}: the spread workload asks for each link as often as its rank says. */
class ZipfTest {

  @Test
  void drawsEachRankInProportionToOneOverItsRankToTheExponent() {
    int ranks = 100;
    double exponent = 1.0;
    Zipf zipf = new Zipf(ranks, exponent);
    int draws = 1_000_000;
    long[] seen = new long[ranks];
    SplittableRandom random = new SplittableRandom(7);
    for (int i = 0; i < draws; i++) {
      seen[zipf.sample(random)]++;
    }
    double harmonic = 0;
    for (int r = 1; r <= ranks; r++) {
      harmonic += 1 / Math.pow(r, exponent);
    }
    for (int rank : new int[] {0, 1, 9, 99}) {
      double expected = 1 / Math.pow(rank + 1, exponent) / harmonic;
      // Five standard deviations of a binomial share: fails by chance about once in a few million
      // runs.
      double tolerance = 5 * Math.sqrt(expected * (1 - expected) / draws);
      assertThat(seen[rank] / (double) draws)
          .as("share of rank %d", rank)
          .isCloseTo(expected, within(tolerance));
    }
    assertThat(zipf.topShare()).isCloseTo(1 / harmonic, within(1e-12));
  }

  @Test
  void aSingleRankIsAlwaysDrawn() {
    Zipf zipf = new Zipf(1, 1.0);
    SplittableRandom random = new SplittableRandom(1);
    for (int i = 0; i < 1000; i++) {
      assertThat(zipf.sample(random)).isZero();
    }
    assertThat(zipf.topShare()).isEqualTo(1.0);
  }
}
