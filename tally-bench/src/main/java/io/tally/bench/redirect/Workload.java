package io.tally.bench.redirect;

import io.tally.testing.Zipf;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Which link each request asks for: always the same one (a viral link: every click lands on one
 * row), or links drawn from a Zipf distribution (rank r is asked for in proportion to 1/r^s), as
 * real traffic is.
 */
final class Workload {

  private final String name;
  private final List<String> codes;

  /** Null for the hot workload: every request asks for its one link. */
  private final Zipf zipf;

  private Workload(String name, List<String> codes, Zipf zipf) {
    this.name = name;
    this.codes = codes;
    this.zipf = zipf;
  }

  static Workload hot(String code) {
    return new Workload("hot", List.of(code), null);
  }

  static Workload zipf(List<String> codes, double exponent) {
    return new Workload("zipf" + codes.size(), codes, new Zipf(codes.size(), exponent));
  }

  String name() {
    return name;
  }

  List<String> codes() {
    return codes;
  }

  /** The index into {@link #codes()} of the next request. */
  int next(SplittableRandom random) {
    return zipf == null ? 0 : zipf.sample(random);
  }

  /** Share of requests that go to the most asked-for link. */
  double topShare() {
    return zipf == null ? 1.0 : zipf.topShare();
  }
}
