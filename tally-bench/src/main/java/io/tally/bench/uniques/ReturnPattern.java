package io.tally.bench.uniques;

import java.util.SplittableRandom;
import java.util.function.IntConsumer;

/**
 * How a link's visitors come back across the days of a range. Returning visitors are what separate
 * a range's uniques from the sum of its days' uniques, so each pattern stresses that gap
 * differently; a visit may land on a day the visitor already came, as a second click that day does.
 */
public enum ReturnPattern {
  /** Everyone comes on one day only: the sum of the days is exact, the sketch only adds noise. */
  NONE("nobody returns") {
    @Override
    void visit(SplittableRandom random, int days, IntConsumer day) {
      day.accept(random.nextInt(days));
    }
  },

  /** A quarter make 2 to 10 visits on random days; the rest come once. */
  QUARTER("a quarter return, 2-10 visits") {
    @Override
    void visit(SplittableRandom random, int days, IntConsumer day) {
      int visits = random.nextInt(4) == 0 ? 2 + random.nextInt(9) : 1;
      for (int v = 0; v < visits; v++) {
        day.accept(random.nextInt(days));
      }
    }
  },

  /**
   * A tenth are loyal and come on each day with probability 0.8; the rest come once. The loyal few
   * then make up most of each day's visitors, which is where summing days overcounts worst.
   */
  LOYAL("a tenth loyal, on ~80% of days") {
    @Override
    void visit(SplittableRandom random, int days, IntConsumer day) {
      if (random.nextInt(10) != 0) {
        day.accept(random.nextInt(days));
        return;
      }
      boolean came = false;
      for (int d = 0; d < days; d++) {
        if (random.nextDouble() < 0.8) {
          day.accept(d);
          came = true;
        }
      }
      // Every generated visitor is counted in the truth, so each must visit at least once.
      if (!came) {
        day.accept(random.nextInt(days));
      }
    }
  };

  private final String label;

  ReturnPattern(String label) {
    this.label = label;
  }

  public String label() {
    return label;
  }

  /** Calls {@code day} once per visit of one visitor, with the visit's day in [0, days). */
  abstract void visit(SplittableRandom random, int days, IntConsumer day);
}
