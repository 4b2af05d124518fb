package io.tally.bench.uniques;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.within;

import java.util.HashSet;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** Tests for the ground truth and the error figures of {@code bench uniques}. */
class RangeTrialTest {

  @Test
  void whenNobodyReturnsTheSumOfDaysIsTheTruth() {
    RangeTrial trial = RangeTrial.run(5_000, 30, ReturnPattern.NONE, 1);

    assertThat(trial.visitors()).isEqualTo(5_000);
    assertThat(trial.sumOfDays()).isEqualTo(5_000);
    assertThat(trial.sumOfDaysError()).isZero();
  }

  @Test
  void returningVisitorsAreCountedOnceInTheTruthButOncePerDayInTheSum() {
    RangeTrial quarter = RangeTrial.run(20_000, 30, ReturnPattern.QUARTER, 2);
    RangeTrial loyal = RangeTrial.run(20_000, 30, ReturnPattern.LOYAL, 3);

    assertThat(quarter.visitors()).isEqualTo(20_000);
    // A quarter make 6 visits on average, nearly all on distinct days of 30: about 2.2 days each.
    assertThat((double) quarter.sumOfDays() / quarter.visitors()).isBetween(2.0, 2.4);
    // A tenth on about 24 of 30 days, the rest on one: about 3.3.
    assertThat((double) loyal.sumOfDays() / loyal.visitors()).isBetween(3.1, 3.5);
    assertThat(quarter.sketchError()).isBetween(-0.03, 0.03);
    assertThat(loyal.sketchError()).isBetween(-0.03, 0.03);
  }

  @Test
  void distinctPeopleHaveDistinctKeys() {
    Set<Long> keys = new HashSet<>();
    for (int person = 0; person < 100_000; person++) {
      keys.add(RangeTrial.keyOf(17, person));
    }

    assertThat(keys).hasSize(100_000);
  }

  @Test
  void theSameSeedGivesTheSameTrial() {
    assertThat(RangeTrial.run(3_000, 30, ReturnPattern.LOYAL, 9))
        .isEqualTo(RangeTrial.run(3_000, 30, ReturnPattern.LOYAL, 9));
  }

  @Test
  void everyPatternVisitsAtLeastOnceAndOnlyWithinTheRange() {
    SplittableRandom random = new SplittableRandom(4);
    for (ReturnPattern pattern : ReturnPattern.values()) {
      for (int visitor = 0; visitor < 2_000; visitor++) {
        Set<Integer> days = new HashSet<>();
        pattern.visit(random, 30, days::add);
        assertThat(days).isNotEmpty().allSatisfy(day -> assertThat(day).isBetween(0, 29));
      }
    }
  }

  @Test
  void summaryKeepsTheSignedMeanTheRmsAndTheWorstMagnitudeWithItsSign() {
    ErrorSummary summary = new ErrorSummary();
    summary.add(0.01);
    summary.add(-0.03);
    summary.add(0.02);

    assertThat(summary.count()).isEqualTo(3);
    assertThat(summary.mean()).isCloseTo(0.0, within(1e-12));
    assertThat(summary.rms()).isCloseTo(Math.sqrt((1 + 9 + 4) / 3.0) / 100, within(1e-12));
    assertThat(summary.worst()).isEqualTo(-0.03);
    assertThat(new ErrorSummary().rms()).isNaN();
  }

  @Test
  void relativeErrorIsSignedAgainstTheTruth() {
    assertThat(RangeTrial.relativeError(102, 100)).isCloseTo(0.02, within(1e-12));
    assertThat(RangeTrial.relativeError(97, 100)).isCloseTo(-0.03, within(1e-12));
  }

  @Test
  void countsTakeThousandAndMillionSuffixes() {
    UniquesBenchmark.CountConverter converter = new UniquesBenchmark.CountConverter();

    assertThat(converter.convert("10k")).isEqualTo(10_000);
    assertThat(converter.convert("1M")).isEqualTo(1_000_000);
    assertThat(converter.convert("250000")).isEqualTo(250_000);
    assertThatIllegalArgumentException().isThrownBy(() -> converter.convert("0"));
  }
}
