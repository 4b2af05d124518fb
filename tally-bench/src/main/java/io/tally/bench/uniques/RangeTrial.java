package io.tally.bench.uniques;

import io.tally.event.VisitorSketches;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Objects;
import java.util.SplittableRandom;
import org.apache.datasketches.cpc.CpcSketch;

/**
 * One link over a range of days: visitors with random-looking 64-bit keys (as the per-link HMAC
 * gives) visit according to a {@link ReturnPattern}; each day gets the click job's sketch and the
 * exact set of its visitors. The range's answer is the union of the days' stored bytes, read back
 * the way the stats API reads them.
 *
 * @param visitors distinct visitors over the range, counted exactly
 * @param sketchEstimate the union of the days' stored sketches
 * @param sumOfDays the answer before sketches: the days' exact distinct counts added up
 */
public record RangeTrial(long visitors, long sketchEstimate, long sumOfDays) {

  public static RangeTrial run(int visitors, int days, ReturnPattern pattern, long seed) {
    SplittableRandom random = new SplittableRandom(seed);
    List<CpcSketch> sketches = new ArrayList<>(days);
    List<BitSet> visitorsByDay = new ArrayList<>(days);
    for (int d = 0; d < days; d++) {
      sketches.add(VisitorSketches.newSketch());
      visitorsByDay.add(new BitSet(visitors));
    }
    for (int visitor = 0; visitor < visitors; visitor++) {
      int person = visitor;
      long key = keyOf(seed, person);
      pattern.visit(
          random,
          days,
          day -> {
            sketches.get(day).update(key);
            visitorsByDay.get(day).set(person);
          });
    }
    List<byte[]> stored =
        sketches.stream().map(VisitorSketches::toBytes).filter(Objects::nonNull).toList();
    long sumOfDays = visitorsByDay.stream().mapToLong(BitSet::cardinality).sum();
    return new RangeTrial(visitors, VisitorSketches.estimateUnion(stored), sumOfDays);
  }

  /**
   * Visitor {@code person}'s key: SplitMix64's finalizer over a Weyl sequence, a bijection, so
   * distinct people have distinct keys and the truth is exactly the number of people, while the
   * keys look as random as the per-link HMAC's.
   */
  static long keyOf(long seed, int person) {
    long z = seed + (person + 1L) * 0x9E3779B97F4A7C15L;
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }

  /** (estimate − truth) / truth of the sketch union. */
  public double sketchError() {
    return relativeError(sketchEstimate, visitors);
  }

  /** (estimate − truth) / truth of the sum of the days' counts. */
  public double sumOfDaysError() {
    return relativeError(sumOfDays, visitors);
  }

  static double relativeError(long estimate, long truth) {
    return (double) (estimate - truth) / truth;
  }
}
