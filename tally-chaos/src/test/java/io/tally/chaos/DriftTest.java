package io.tally.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.event.ClickEvent;
import io.tally.testing.ClickOracle;
import io.tally.testing.ClickStream;
import io.tally.testing.Clients;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.datasketches.cpc.CpcSketch;
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
  void aDaySketchIsWrongWhenMissingWhereNoneIsDueOrEstimatingOtherVisitors() {
    ClickOracle truth = new ClickOracle();
    ClickStream stream = new ClickStream(click -> {}, "t", 1, 0, ClickOracle.MINUTE, 1, 0, 1);
    CpcSketch all = new CpcSketch(14);
    CpcSketch half = new CpcSketch(14);
    for (int i = 0; i < 600; i++) {
      ClickEvent click = stream.click(1_000 + i);
      truth.add(click);
      if (!Clients.facts(click).bot()) {
        all.update(click.rangeVisitor());
        if (i % 2 == 0) {
          half.update(click.rangeVisitor());
        }
      }
    }
    String day = truth.dayVisitorKeyCounts().keySet().iterator().next();
    String right = HexFormat.of().formatHex(all.toByteArray());

    assertThat(truth.daySketchMismatches(Map.of(day, right))).isEmpty();
    assertThat(truth.daySketchMismatches(Map.of())).containsOnlyKeys(day);
    assertThat(truth.daySketchMismatches(Map.of(day, right, "t000001@0", right)))
        .containsOnlyKeys("t000001@0");
    assertThat(truth.daySketchMismatches(Map.of(day, HexFormat.of().formatHex(half.toByteArray()))))
        .containsOnlyKeys(day);
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
