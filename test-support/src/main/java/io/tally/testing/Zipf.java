package io.tally.testing;

import java.util.SplittableRandom;

/**
 * Ranks drawn from a Zipf distribution: rank r (from 0) comes up in proportion to 1 / (r +
 * 1)^exponent.
 */
public final class Zipf {

  private final double[] cumulative;

  public Zipf(int ranks, double exponent) {
    cumulative = new double[ranks];
    double sum = 0;
    for (int rank = 1; rank <= ranks; rank++) {
      sum += 1.0 / Math.pow(rank, exponent);
      cumulative[rank - 1] = sum;
    }
    for (int i = 0; i < ranks; i++) {
      cumulative[i] /= sum;
    }
  }

  /** The next rank, by binary search of the cumulative shares. */
  public int sample(SplittableRandom random) {
    double u = random.nextDouble();
    int lo = 0;
    int hi = cumulative.length - 1;
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (cumulative[mid] < u) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }

  /** The share of draws that go to the first rank. */
  public double topShare() {
    return cumulative[0];
  }
}
