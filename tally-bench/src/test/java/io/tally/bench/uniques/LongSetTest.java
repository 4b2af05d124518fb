package io.tally.bench.uniques;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** Tests for {@link LongSet}, the exact count every error is measured against. */
class LongSetTest {

  @Test
  void countsWhatAHashSetCountsThroughRepeatsGrowthAndZero() {
    SplittableRandom random = new SplittableRandom(5);
    LongSet ours = new LongSet(4);
    Set<Long> reference = new HashSet<>();
    for (int i = 0; i < 200_000; i++) {
      // Few distinct values so repeats are common, and keys equal modulo the table size collide.
      long key = random.nextInt(3) == 0 ? random.nextInt(1_000) << 40 : random.nextLong(100_000);
      assertThat(ours.add(key)).isEqualTo(reference.add(key));
    }
    assertThat(reference).contains(0L);
    assertThat(ours.size()).isEqualTo(reference.size());
  }
}
