package io.tally.bench.redirect;

import io.tally.testing.Zipf;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Which link each request asks for: always the same one (a viral link: every click lands on one
 * row), links drawn from a Zipf distribution (rank r is asked for in proportion to 1/r^s), as real
 * traffic is, or each of a list once.
 */
final class Workload {

  private final String name;
  private final List<String> codes;

  /** Null for the hot and the sequential workloads. */
  private final Zipf zipf;

  private final boolean sequential;
  private int cursor;

  private Workload(String name, List<String> codes, Zipf zipf, boolean sequential) {
    this.name = name;
    this.codes = codes;
    this.zipf = zipf;
    this.sequential = sequential;
  }

  static Workload hot(String code) {
    return new Workload("hot", List.of(code), null, false);
  }

  static Workload zipf(List<String> codes, double exponent) {
    return new Workload("zipf" + codes.size(), codes, new Zipf(codes.size(), exponent), false);
  }

  /**
   * Each code once, in order (then again from the first): never-followed links, or a flood of
   * distinct unknown codes. For one load generator at a time.
   */
  static Workload sequence(String name, List<String> codes) {
    return new Workload(name, codes, null, true);
  }

  String name() {
    return name;
  }

  List<String> codes() {
    return codes;
  }

  /** The index into {@link #codes()} of the next request. */
  int next(SplittableRandom random) {
    if (sequential) {
      int next = cursor;
      cursor = (cursor + 1) % codes.size();
      return next;
    }
    return zipf == null ? 0 : zipf.sample(random);
  }

  /** Share of requests that go to the most asked-for link. */
  double topShare() {
    if (sequential) {
      return 1.0 / codes.size();
    }
    return zipf == null ? 1.0 : zipf.topShare();
  }
}
