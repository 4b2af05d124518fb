package io.tally.clickjob.functions;

import static io.tally.counting.Clicks.MINUTE;
import static io.tally.counting.Clicks.at;
import static io.tally.counting.Clicks.botClick;
import static io.tally.counting.Clicks.referred;
import static io.tally.counting.Clicks.visit;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import io.tally.clickjob.ClickCountJobGraphs;
import io.tally.clickjob.ClickJobOptions;
import io.tally.counting.Clicks;
import io.tally.counting.periods.ClickTally;
import io.tally.counting.periods.LinkPeriods;
import io.tally.counting.periods.MinuteTotals;
import io.tally.counting.periods.Recount;
import io.tally.counting.records.AggregateRow;
import io.tally.counting.records.Click;
import io.tally.counting.records.DimensionCount;
import io.tally.counting.records.KeptValues;
import io.tally.counting.records.MinuteCount;
import io.tally.counting.records.PeriodTotals;
import io.tally.event.ClickEvent;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import java.util.stream.IntStream;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.streaming.util.AbstractStreamOperatorTestHarness;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Tests for {@link CountClicksPerLink} as {@code ClickCountJob} configures it (2 minutes of
 * lateness, early firings every 2 s), on the heap state backend, which can count its entries; the
 * job's ITCase runs it on RocksDB.
 */
class CountClicksPerLinkTest {

  private static final long HOUR_START = LinkPeriods.hourOf(at(0));
  private static final long DAY_START = LinkPeriods.dayOf(at(0));
  private static final Duration EARLY = Duration.ofSeconds(2);

  private final List<KeyedOneInputStreamOperatorTestHarness<String, MinuteTotals, AggregateRow>>
      harnesses = new ArrayList<>();

  @AfterEach
  void tearDown() throws Exception {
    for (var harness : harnesses) {
      harness.close();
    }
  }

  @Test
  void writesAMinuteWhenTheWatermarkPassesItAndABacklogsHourAndDayWithTheirBreakdownsOnTheFlush()
      throws Exception {
    var harness = open(null, at(10 * MINUTE), 1, 0); // the minutes are a backlog: no early writes
    harness.processElement(
        partial(
            "abc",
            at(0),
            visit("1", "abc", at(1), "v1").withNewVisitor(true, true),
            botClick("2", "abc", at(2))),
        at(0));
    harness.processElement(
        partial("abc", at(0), visit("3", "abc", at(3), "v2").withNewVisitor(true, true)), at(0));
    harness.processElement(
        partial("abc", at(MINUTE), visit("4", "abc", at(MINUTE), "v1")), at(MINUTE));
    harness.setProcessingTime(at(10 * MINUTE) + 5 * EARLY.toMillis());
    harness.processWatermark(at(MINUTE - 2));
    assertThat(rows(harness, AggregateRow::minute)).as("nothing before the minute ends").isEmpty();

    harness.processWatermark(at(MINUTE - 1));

    assertThat(rows(harness, AggregateRow::minute))
        .containsExactly(new MinuteCount("abc", at(0), 2, 1));
    assertThat(rows(harness, AggregateRow::hour))
        .as("a backlog's open hour waits for its end or the backlog flush")
        .isEmpty();
    harness.processWatermark(at(2 * MINUTE - 1));
    assertThat(rows(harness, AggregateRow::minute))
        .last()
        .isEqualTo(new MinuteCount("abc", at(MINUTE), 1, 0));
    ClickCountJobGraphs.checkpoint(harness, 1);
    assertThat(rows(harness, AggregateRow::hour))
        .as("a checkpoint stores what is unwritten; it writes nothing")
        .isEmpty();

    RollupTurns.throughEveryTurn(harness, EARLY);

    assertThat(rows(harness, AggregateRow::hour))
        .containsExactly(new PeriodTotals("abc", HOUR_START, 3, 1, 2));
    assertThat(rows(harness, AggregateRow::day))
        .containsExactly(new PeriodTotals("abc", DAY_START, 3, 1, 2));
    assertThat(rows(harness, AggregateRow::dimension))
        .contains(
            new DimensionCount("abc", HOUR_START, ClickTally.COUNTRY, "DE", 3),
            new DimensionCount("abc", HOUR_START, ClickTally.BOT_KIND, "crawler", 1));
    assertThat(rows(harness, AggregateRow::dayDimension))
        .contains(
            new DimensionCount("abc", DAY_START, ClickTally.COUNTRY, "DE", 3),
            new DimensionCount("abc", DAY_START, ClickTally.BOT_KIND, "crawler", 1));

    harness.processWatermark(HOUR_START + LinkPeriods.HOUR - 1);
    assertThat(rows(harness, AggregateRow::hour))
        .as("the hour unchanged since: not written again")
        .hasSize(1);
  }

  @Test
  void aLiveMinuteIsWrittenOnEveryTickItsHourAndDayOnItsTurnAndOnlyChangedBreakdowns()
      throws Exception {
    assertThat(List.of(RollupTurns.of("abc", EARLY), RollupTurns.of("xyz", EARLY)))
        .as("the first two ticks are not these links' turns")
        .doesNotContain(0, 1);
    var harness = open(null, at(30_000), 1, 0);
    harness.processElement(
        partial("abc", at(0), visit("1", "abc", at(1_000), "v1").withNewVisitor(true, true)),
        at(0));
    harness.processElement(partial("xyz", at(0), botClick("2", "xyz", at(2_000))), at(0));
    assertThat(rows(harness, AggregateRow::minute)).isEmpty();

    harness.setProcessingTime(at(30_000) + EARLY.toMillis());

    assertThat(rows(harness, AggregateRow::minute))
        .containsExactlyInAnyOrder(
            new MinuteCount("abc", at(0), 1, 0), new MinuteCount("xyz", at(0), 0, 1));
    assertThat(harness.extractOutputValues())
        .as("the round's end tells the writer to send its rows now")
        .last()
        .isEqualTo(AggregateRow.END_OF_ROUND);
    assertThat(harness.extractOutputValues())
        .as("an open hour and day wait for their link's turn")
        .allMatch(row -> row.minute() != null || row.endsRound());

    harness.processElement(partial("abc", at(0), fromFrance("3")), at(0));
    harness.setProcessingTime(at(30_000) + 2 * EARLY.toMillis());

    assertThat(rows(harness, AggregateRow::minute))
        .last()
        .isEqualTo(new MinuteCount("abc", at(0), 2, 0));
    assertThat(harness.extractOutputValues())
        .allMatch(row -> row.minute() != null || row.endsRound());

    RollupTurns.throughEveryTurn(harness, EARLY);

    assertThat(rows(harness, AggregateRow::hour))
        .containsExactlyInAnyOrder(
            new PeriodTotals("abc", HOUR_START, 2, 0, 2),
            new PeriodTotals("xyz", HOUR_START, 0, 1, 0));
    assertThat(rows(harness, AggregateRow::dimension))
        .contains(
            new DimensionCount("abc", HOUR_START, ClickTally.COUNTRY, "DE", 1),
            new DimensionCount("abc", HOUR_START, ClickTally.COUNTRY, "FR", 1),
            new DimensionCount("abc", HOUR_START, ClickTally.BROWSER, "Chrome", 2));
    int dimensionRows = rows(harness, AggregateRow::dimension).size();

    harness.processElement(partial("abc", at(0), fromFrance("4")), at(0));
    RollupTurns.throughEveryTurn(harness, EARLY);

    assertThat(rows(harness, AggregateRow::hour))
        .last()
        .isEqualTo(new PeriodTotals("abc", HOUR_START, 3, 0, 3));
    assertThat(
            rows(harness, AggregateRow::dimension)
                .subList(dimensionRows, rows(harness, AggregateRow::dimension).size()))
        .as("the country FR and the browser changed; the country DE did not")
        .contains(
            new DimensionCount("abc", HOUR_START, ClickTally.COUNTRY, "FR", 2),
            new DimensionCount("abc", HOUR_START, ClickTally.BROWSER, "Chrome", 3))
        .doesNotContain(new DimensionCount("abc", HOUR_START, ClickTally.COUNTRY, "DE", 1));

    int written = harness.extractOutputValues().size();
    RollupTurns.throughEveryTurn(harness, EARLY);
    assertThat(harness.extractOutputValues()).as("nothing new, nothing written").hasSize(written);
  }

  @Test
  void eachTickWritesTheRollupsOfAShareOfTheLinksAndEveryLinksOnceAnInterval() throws Exception {
    var harness = open(null, at(10 * MINUTE), 1, 0); // a backlog: every link's hour has changed
    List<String> codes = IntStream.range(0, 150).mapToObj(n -> "link" + n).toList();
    for (String code : codes) {
      harness.processElement(partial(code, at(0), visit("c-" + code, code, at(1), "")), at(0));
    }
    List<Integer> hoursPerTick = new ArrayList<>();
    long now = harness.getProcessingTime();
    for (long tick = 1; tick <= RollupTurns.perInterval(EARLY); tick++) {
      int before = rows(harness, AggregateRow::hour).size();
      harness.setProcessingTime(now + tick * EARLY.toMillis());
      hoursPerTick.add(rows(harness, AggregateRow::hour).size() - before);
    }

    assertThat(rows(harness, AggregateRow::hour))
        .extracting(PeriodTotals::code)
        .as("every link's hour once in an interval")
        .containsExactlyInAnyOrderElementsOf(codes);
    assertThat(hoursPerTick)
        .as("no tick holds the next one's live minutes behind most links' roll-ups")
        .allMatch(hours -> hours < codes.size() / 4);
  }

  /** A new visitor's click on "abc" from France, on Chrome, in the first minute. */
  private static Click fromFrance(String label) {
    return new Click(
        Clicks.id(label),
        "abc",
        at(3_000),
        "",
        "v" + label,
        ClickEvent.NO_RANGE_VISITOR,
        "FR",
        "",
        "Chrome",
        "Windows",
        "desktop",
        true,
        true);
  }

  @Test
  void anHourKeepsAsManyReferrersAsTheSettingSaysOfLeastRankAndCountsTheRestUnderOther()
      throws Exception {
    var harness = open(null, at(10 * MINUTE), 1, 0, "--max-dimension-values", "2");
    for (int i = 0; i < 5; i++) {
      Click flood =
          new Click(
              Clicks.id("f" + i),
              "abc",
              at(i),
              "",
              "",
              ClickEvent.NO_RANGE_VISITOR,
              "DE",
              "r" + i + ".example",
              "Chrome",
              "Windows",
              "desktop",
              false,
              false);
      harness.processElement(partial("abc", at(0), flood), at(0));
    }

    harness.processWatermark(HOUR_START + LinkPeriods.HOUR - 1);

    List<String> kept =
        IntStream.range(0, 5)
            .mapToObj(i -> "r" + i + ".example")
            .sorted(ClickTally.BY_RANK)
            .limit(2)
            .toList();
    assertThat(rows(harness, AggregateRow::dimension))
        .filteredOn(row -> row.dimension().equals(ClickTally.REFERRER))
        .containsExactlyInAnyOrder(
            new DimensionCount("abc", HOUR_START, ClickTally.REFERRER, kept.get(0), 1),
            new DimensionCount("abc", HOUR_START, ClickTally.REFERRER, kept.get(1), 1),
            new DimensionCount("abc", HOUR_START, ClickTally.REFERRER, DimensionCount.OTHER, 3));
  }

  @Test
  void aRestoredJobClearsABreakdownThatFillsAfterTheRestore() throws Exception {
    var first = open(null, at(10 * MINUTE), 1, 0, "--max-dimension-values", "1");
    first.processElement(partial("abc", at(0), referred("1", "abc", at(1), "a.example")), at(0));
    OperatorSubtaskState state = ClickCountJobGraphs.checkpoint(first, 1);

    var restored = open(state, at(10 * MINUTE), 1, 0, "--max-dimension-values", "1");
    restored.processElement(partial("abc", at(0), referred("2", "abc", at(1), "b.example")), at(0));
    restored.processWatermark(HOUR_START + LinkPeriods.HOUR - 1);

    assertThat(rows(restored, AggregateRow::hourKept))
        .containsExactly(
            new KeptValues("abc", HOUR_START, ClickTally.REFERRER, new String[] {"a.example"}));
  }

  @Test
  void aRunRestoredOnMoreSubtasksGoesOnWithTheRecountItStartedWithoutState() throws Exception {
    Recount recount = Recount.whole(DAY_START, at(10 * MINUTE), MINUTE);
    var first = open(null, recount, at(10 * MINUTE), 1, 0);
    first.processElement(partial("abc", at(0), visit("1", "abc", at(1), "")), at(0));
    OperatorSubtaskState state = ClickCountJobGraphs.checkpoint(first, 1);

    // Restored by a client that found nothing to recount: the run keeps its own recount.
    for (int i = 0; i < 2; i++) {
      int subtask = i;
      var restored =
          open(
              AbstractStreamOperatorTestHarness.repartitionOperatorState(state, 128, 1, 2, subtask),
              Recount.NONE,
              at(10 * MINUTE),
              2,
              subtask);
      String code =
          IntStream.range(0, 100)
              .mapToObj(n -> "k" + n)
              .filter(
                  k -> KeyGroupRangeAssignment.assignKeyToParallelOperator(k, 128, 2) == subtask)
              .findFirst()
              .orElseThrow();
      // Of the day before the recount: not counted. In the hour recounted: held until whole.
      restored.processElement(
          partial(code, at(0) - LinkPeriods.DAY, visit("2", code, at(2) - LinkPeriods.DAY, "")),
          at(0));
      restored.processElement(partial(code, at(MINUTE), visit("3", code, at(MINUTE), "")), at(0));
      RollupTurns.throughEveryTurn(restored, EARLY);
      assertThat(restored.extractOutputValues()).as("subtask " + subtask).isEmpty();

      restored.processWatermark(at(10 * MINUTE));
      RollupTurns.throughEveryTurn(restored, EARLY);
      assertThat(rows(restored, AggregateRow::minute))
          .as("subtask " + subtask)
          .contains(new MinuteCount(code, at(MINUTE), 1, 0))
          .allMatch(row -> row.minuteStart() >= DAY_START);
      assertThat(restored.extractOutputValues())
          .as("subtask " + subtask)
          .allMatch(row -> row.minute() == null || row.replaces());
    }
  }

  @Test
  void aLatePartialRewritesItsClosedMinuteWithTheWholeTotal() throws Exception {
    var harness = open(null, at(10 * MINUTE), 1, 0);
    harness.processElement(partial("abc", at(0), visit("1", "abc", at(1), "")), at(0));
    harness.processWatermark(at(MINUTE + 30_000));
    assertThat(rows(harness, AggregateRow::minute))
        .containsExactly(new MinuteCount("abc", at(0), 1, 0));

    harness.processElement(partial("abc", at(0), visit("2", "abc", at(2), "")), at(0));
    harness.setProcessingTime(at(10 * MINUTE) + EARLY.toMillis());

    assertThat(rows(harness, AggregateRow::minute))
        .containsExactly(new MinuteCount("abc", at(0), 1, 0), new MinuteCount("abc", at(0), 2, 0));
  }

  @Test
  void aCheckpointStoresWhatIsUnwrittenAndARestoreOnMoreSubtasksWritesItAndCarriesOn()
      throws Exception {
    var before = open(null, at(10 * MINUTE), 1, 0);
    for (String code : List.of("a", "b", "c", "d", "e", "f", "quiet")) {
      before.processElement(
          partial(code, at(0), visit(code + "1", code, at(1), "v1").withNewVisitor(true, true)),
          at(0));
    }
    OperatorSubtaskState snapshot = ClickCountJobGraphs.checkpoint(before, 1);
    assertThat(rows(before, AggregateRow::minute))
        .as("a backlog's minutes wait for the watermark")
        .isEmpty();

    List<MinuteCount> after = new ArrayList<>();
    List<PeriodTotals> hours = new ArrayList<>();
    for (int i = 0; i < 2; i++) {
      int subtask = i;
      var harness =
          open(
              AbstractStreamOperatorTestHarness.repartitionOperatorState(
                  snapshot, 128, 1, 2, subtask),
              at(10 * MINUTE),
              2,
              subtask);
      for (String code : List.of("a", "b", "c", "d", "e", "f")) {
        if (KeyGroupRangeAssignment.assignKeyToParallelOperator(code, 128, 2) == subtask) {
          harness.processElement(
              partial(code, at(0), visit(code + "2", code, at(2), "v2").withNewVisitor(true, true)),
              at(0));
        }
      }
      harness.processWatermark(at(MINUTE - 1));
      RollupTurns.throughEveryTurn(harness, EARLY);
      after.addAll(rows(harness, AggregateRow::minute));
      hours.addAll(rows(harness, AggregateRow::hour));
    }

    assertThat(after)
        .as("each link's minute goes on from its restored total, on whichever subtask owns it")
        .extracting(MinuteCount::code, MinuteCount::clicks)
        .containsExactlyInAnyOrder(
            tuple("a", 2L),
            tuple("b", 2L),
            tuple("c", 2L),
            tuple("d", 2L),
            tuple("e", 2L),
            tuple("f", 2L),
            tuple("quiet", 1L));
    assertThat(hours)
        .extracting(PeriodTotals::code, PeriodTotals::visitors)
        .containsExactlyInAnyOrder(
            tuple("a", 2L),
            tuple("b", 2L),
            tuple("c", 2L),
            tuple("d", 2L),
            tuple("e", 2L),
            tuple("f", 2L),
            tuple("quiet", 1L));
  }

  @Test
  void setsNoTimerPerLinkAndLeavesNoStateOnceEveryPeriodIsPastItsLateness() throws Exception {
    var harness = open(null, at(10 * MINUTE), 1, 0);
    for (int i = 0; i < 100; i++) {
      harness.processElement(
          partial("link" + i, at(0), visit("c" + i, "link" + i, at(i), "")), at(0));
    }
    assertThat(harness.numEventTimeTimers()).isZero();
    assertThat(harness.numProcessingTimeTimers()).isZero();
    ClickCountJobGraphs.checkpoint(harness, 1);
    assertThat(harness.numKeyedStateEntries()).isEqualTo(100);

    harness.processWatermark(DAY_START + LinkPeriods.DAY + 2 * MINUTE - 1);
    ClickCountJobGraphs.checkpoint(harness, 2);

    assertThat(harness.numKeyedStateEntries()).isZero();
    assertThat(rows(harness, AggregateRow::day)).hasSize(100);
  }

  @Test
  void aLinkStoredBeforeAStopLongerThanTheStateTtlGoesOnFromItsTotalsAfterIt() throws Exception {
    long now = at(10 * MINUTE);
    var before = open(null, now, 1, 0);
    before.processElement(partial("abc", at(0), visit("1", "abc", at(1), "")), at(0));
    before.processWatermark(at(MINUTE - 1));
    RollupTurns.throughEveryTurn(before, EARLY); // the backlog's hour and day are written
    ClickCountJobGraphs.checkpoint(before, 1);
    ClickCountJobGraphs.checkpoint(
        before, 2); // unchanged since the last one, the link leaves the heap
    RollupTurns.throughEveryTurn(before, EARLY);
    OperatorSubtaskState savepoint = ClickCountJobGraphs.checkpoint(before, 3);

    long resumedAt = before.getProcessingTime() + Duration.ofDays(3).toMillis(); // a long weekend
    var after = open(savepoint, resumedAt, 1, 0);
    after.processElement(partial("abc", at(MINUTE), visit("2", "abc", at(MINUTE), "")), at(0));
    after.processWatermark(at(2 * MINUTE - 1));
    RollupTurns.throughEveryTurn(after, EARLY);

    assertThat(rows(after, AggregateRow::hour))
        .as("the hour goes on from the click before the stop")
        .extracting(PeriodTotals::clicks)
        .containsExactly(2L);
    assertThat(rows(after, AggregateRow::day)).extracting(PeriodTotals::clicks).containsExactly(2L);
  }

  private KeyedOneInputStreamOperatorTestHarness<String, MinuteTotals, AggregateRow> open(
      OperatorSubtaskState state, long now, int parallelism, int subtask, String... flags)
      throws Exception {
    return open(state, Recount.NONE, now, parallelism, subtask, flags);
  }

  /** The counting operator, started without state with {@code recount} unless given a state. */
  private KeyedOneInputStreamOperatorTestHarness<String, MinuteTotals, AggregateRow> open(
      OperatorSubtaskState state,
      Recount recount,
      long now,
      int parallelism,
      int subtask,
      String... flags)
      throws Exception {
    List<String> args =
        new ArrayList<>(List.of("--allowed-lateness", "2m", "--early-firing-interval", "2s"));
    args.addAll(List.of(flags));
    var harness =
        ClickCountJobGraphs.countHarness(
            ClickJobOptions.parse(args.toArray(String[]::new)), recount, 128, parallelism, subtask);
    harnesses.add(harness);
    harness.setProcessingTime(now);
    harness.setStateTtlProcessingTime(now);
    if (state != null) {
      harness.initializeState(state);
    }
    harness.open();
    return harness;
  }

  private static MinuteTotals partial(String code, long minuteStart, Click... clicks) {
    ClickTally tally = new ClickTally();
    for (Click click : clicks) {
      tally.add(click);
    }
    return new MinuteTotals(code, minuteStart, tally);
  }

  /** The rows of one table the operator wrote, in order. */
  private static <T> List<T> rows(
      KeyedOneInputStreamOperatorTestHarness<String, MinuteTotals, AggregateRow> harness,
      Function<AggregateRow, T> table) {
    return harness.extractOutputValues().stream().map(table).filter(Objects::nonNull).toList();
  }
}
