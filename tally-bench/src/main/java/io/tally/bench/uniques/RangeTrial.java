package io.tally.bench.uniques;

import io.tally.event.VisitorSketches;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.SplittableRandom;
import org.apache.datasketches.cpc.CpcSketch;

/**
 * One link over a range of days: visitors with random 64-bit keys (as the per-link HMAC gives)
 * visit according to a {@link ReturnPattern}; each day gets the click job's sketch and an exact set
 * of its keys, and the range an exact set of everyone's. The range's answer is the union of the
 * days' stored bytes, read back the way the stats API reads them.
 *
 * @param visitors distinct visitors over the range, counted exactly
 * @param sketchEstimate the union of the days' stored sketches
 * @param sumOfDays the answer before sketches: the days' exact distinct counts added up
 */
public record RangeTrial(long visitors, long sketchEstimate, long sumOfDays) {

  public static RangeTrial run(int visitors, int days, ReturnPattern pattern, long seed) {
    SplittableRandom random = new SplittableRandom(seed);
    List<CpcSketch> sketches = new ArrayList<>(days);
    List<LongSet> exactDays = new ArrayList<>(days);
    for (int d = 0; d < days; d++) {
      sketches.add(VisitorSketches.newSketch());
      exactDays.add(new LongSet(2 * visitors / days));
    }
    LongSet everyone = new LongSet(visitors);
    while (everyone.size() < visitors) {
      long key = random.nextLong();
      // A repeated key is the same visitor to a sketch too; drawing again keeps the truth at
      // exactly
      // the number asked for.
      if (!everyone.add(key)) {
        continue;
      }
      pattern.visit(
          random,
          days,
          day -> {
            sketches.get(day).update(key);
            exactDays.get(day).add(key);
          });
    }
    List<byte[]> stored =
        sketches.stream().map(VisitorSketches::toBytes).filter(Objects::nonNull).toList();
    long sumOfDays = exactDays.stream().mapToLong(LongSet::size).sum();
    return new RangeTrial(everyone.size(), VisitorSketches.estimateUnion(stored), sumOfDays);
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
