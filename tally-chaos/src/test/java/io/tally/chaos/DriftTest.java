package io.tally.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.testing.ClickOracle;
import io.tally.testing.ClickStream;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Tests for {@link Drift} and the text search of {@link PrivacyScan}. */
class DriftTest {

  @Test
  void equalRowsHaveNoDrift() {
    assertThat(Drift.compare(Map.of("a|0", new long[] {3, 1}), Map.of("a|0", new long[] {3, 1})))
        .isZero();
  }

  @Test
  void everyColumnsDifferenceCountsAndAMissingOrExtraRowCountsWhole() {
    Map<String, long[]> stored = Map.of("a|0", new long[] {5, 1}, "extra|0", new long[] {2, 0});
    Map<String, long[]> truth = Map.of("a|0", new long[] {3, 2}, "missing|0", new long[] {4, 4});

    assertThat(Drift.compare(stored, truth)).isEqualTo(2 + 1 + 2 + 8);
  }

  @Test
  void aDaySketchCountsOnceWhenItDiffersOrOnlyOneSideHasIt() {
    Map<String, String> stored = Map.of("a|0", "0401", "b|0", "0402", "extra|0", "0403");
    Map<String, String> truth = Map.of("a|0", "0401", "b|0", "04ff", "missing|0", "0404");

    assertThat(Drift.differing(stored, truth)).isEqualTo(3);
    assertThat(Drift.differing(truth, truth)).isZero();
  }

  @Test
  void aPersonHasOneKeyPerLinkEveryDayAndAnotherOnAnotherLink() {
    ClickStream stream = new ClickStream(click -> {}, "t", 3, 0, ClickOracle.MINUTE, 1, 0, 1);
    Map<String, Map<String, Long>> keysByLinkAndVisitor = new HashMap<>();
    Set<Long> keys = new HashSet<>();
    for (int i = 0; i < 20_000; i++) {
      var click = stream.click(1_000 + i);
      Long earlier =
          keysByLinkAndVisitor
              .computeIfAbsent(click.code(), code -> new HashMap<>())
              .putIfAbsent(click.visitor(), click.rangeVisitor());
      assertThat(earlier).isIn(null, click.rangeVisitor());
      keys.add(click.rangeVisitor());
    }
    long linkVisitorPairs = keysByLinkAndVisitor.values().stream().mapToLong(Map::size).sum();

    assertThat(keys).hasSize((int) linkVisitorPairs);
  }

  @Test
  void theTruthCountsAClickIdOnce() {
    ClickOracle truth = new ClickOracle();
    ClickStream stream = new ClickStream(truth::add, "t", 5, 0, ClickOracle.MINUTE, 1, 0, 1);
    var click = stream.click(1_000);

    assertThat(truth.add(click)).isTrue();
    assertThat(truth.add(click)).isFalse();
    assertThat(truth.distinct()).isEqualTo(1);
    assertThat(truth.minutes().values().stream().mapToLong(c -> c[0] + c[1]).sum()).isEqualTo(1);
  }

  @Test
  void theScanFindsEveryOccurrenceOfAnAddress() {
    String text = "GET /x from 203.0.113.42, forwarded for 203.0.113.42 and 2001:db8::7";

    assertThat(PrivacyScan.occurrences(text, List.of("203.0.113.42", "2001:db8::7", "192.0.2.17")))
        .containsExactlyInAnyOrderEntriesOf(Map.of("203.0.113.42", 2L, "2001:db8::7", 1L));
  }
}
