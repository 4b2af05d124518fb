package io.tally.event;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.apache.datasketches.cpc.CpcSketch;
import org.junit.jupiter.api.Test;

/** Tests for {@link VisitorSketches}. */
class VisitorSketchesTest {

  /**
   * 100,000 people over 30 days, a quarter of them coming back on up to ten days: the union of the
   * days' stored sketches is within 2% of the true number, where adding the days' own counts is far
   * above it.
   */
  @Test
  void aMonthOfDaySketchesCountsReturningVisitorsOnceWithinTwoPercent() {
    Random random = new Random(20261202);
    List<CpcSketch> days = new ArrayList<>();
    List<Set<Long>> exactDays = new ArrayList<>();
    for (int d = 0; d < 30; d++) {
      days.add(VisitorSketches.newSketch());
      exactDays.add(new HashSet<>());
    }
    Set<Long> everyone = new HashSet<>();
    while (everyone.size() < 100_000) {
      long key = random.nextLong();
      everyone.add(key);
      int visits = random.nextInt(4) == 0 ? 1 + random.nextInt(10) : 1;
      for (int v = 0; v < visits; v++) {
        int day = random.nextInt(30);
        days.get(day).update(key);
        exactDays.get(day).add(key);
      }
    }
    List<byte[]> stored = days.stream().map(VisitorSketches::toBytes).toList();

    long estimate = VisitorSketches.estimateUnion(stored);
    long sumOfDays = exactDays.stream().mapToLong(Set::size).sum();

    assertThat((double) Math.abs(estimate - everyone.size()) / everyone.size()).isLessThan(0.02);
    assertThat(sumOfDays).isGreaterThan(120_000);
    assertThat(stored).allSatisfy(bytes -> assertThat(bytes.length).isLessThan(4_200));
  }

  @Test
  void theSameVisitorsGiveTheSameBytesInAnyOrderAndAUnionWithItselfChangesNothing() {
    List<Long> keys = new ArrayList<>();
    Random random = new Random(7);
    for (int i = 0; i < 20_000; i++) {
      keys.add(random.nextLong());
    }
    CpcSketch forwards = VisitorSketches.newSketch();
    keys.forEach(forwards::update);
    Collections.shuffle(keys, random);
    CpcSketch shuffledTwice = VisitorSketches.newSketch();
    keys.forEach(shuffledTwice::update);
    keys.forEach(shuffledTwice::update);

    byte[] stored = VisitorSketches.toBytes(forwards);

    assertThat(VisitorSketches.toBytes(shuffledTwice)).isEqualTo(stored);
    assertThat(VisitorSketches.estimateUnion(List.of(stored, stored)))
        .isEqualTo(VisitorSketches.estimateUnion(List.of(stored)));
  }

  @Test
  void aFewVisitorsAreCountedExactlyInAFewBytesAndNoneAreStoredAsNothing() {
    CpcSketch three = VisitorSketches.newSketch();
    three.update(1L);
    three.update(2L);
    three.update(3L);

    byte[] stored = VisitorSketches.toBytes(three);

    assertThat(VisitorSketches.estimateUnion(List.of(stored))).isEqualTo(3);
    assertThat(stored.length).isLessThan(40);
    assertThat(VisitorSketches.toBytes(VisitorSketches.newSketch())).isNull();
    assertThat(VisitorSketches.estimateUnion(List.of())).isZero();
  }

  @Test
  void keysAreSixteenHexDigitsBothWays() {
    assertThat(VisitorSketches.formatKey(-2L)).isEqualTo("fffffffffffffffe");
    assertThat(VisitorSketches.parseKey("FFFFFFFFFFFFFFFE")).isEqualTo(-2L);
    assertThat(VisitorSketches.parseKey(VisitorSketches.formatKey(0x1234L))).isEqualTo(0x1234L);
    assertThatIllegalArgumentException()
        .isThrownBy(() -> VisitorSketches.parseKey("+123456789abcdef"))
        .withMessage("range_visitor is not 16 hex digits");
  }
}
