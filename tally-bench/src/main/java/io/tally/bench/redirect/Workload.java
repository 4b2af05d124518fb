package io.tally.bench.redirect;

import java.util.List;
import java.util.SplittableRandom;

/**
 * Which link each request asks for: always the same one (a viral link: every click lands on one row), or
 * links drawn from a Zipf distribution (rank r is asked for in proportion to 1/r^s), as real traffic is.
 */
final class Workload {

  private final String name;
  private final List<String> codes;
  private final double[] cumulative;

  private Workload(String name, List<String> codes, double[] cumulative) {
    this.name = name;
    this.codes = codes;
    this.cumulative = cumulative;
  }

  static Workload hot(String code) {
    return new Workload("hot", List.of(code), new double[] {1.0});
  }

  static Workload zipf(List<String> codes, double exponent) {
    double[] cumulative = new double[codes.size()];
    double sum = 0;
    for (int rank = 1; rank <= codes.size(); rank++) {
      sum += 1.0 / Math.pow(rank, exponent);
      cumulative[rank - 1] = sum;
    }
    for (int i = 0; i < cumulative.length; i++) {
      cumulative[i] /= sum;
    }
    return new Workload("zipf" + codes.size(), codes, cumulative);
  }

  String name() {
    return name;
  }

  List<String> codes() {
    return codes;
  }

  /** The index into {@link #codes()} of the next request. */
  int next(SplittableRandom random) {
    if (cumulative.length == 1) {
      return 0;
    }
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

  /** Share of requests that go to the most asked-for link. */
  double topShare() {
    return cumulative[0];
  }
}
