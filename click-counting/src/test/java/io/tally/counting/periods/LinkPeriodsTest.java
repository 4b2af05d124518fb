package io.tally.counting.periods;

import static io.tally.counting.Clicks.MINUTE;
import static io.tally.counting.Clicks.at;
import static io.tally.counting.Clicks.botClick;
import static io.tally.counting.Clicks.referred;
import static io.tally.counting.Clicks.visit;
import static org.assertj.core.api.Assertions.assertThat;

import io.tally.counting.Clicks;
import io.tally.counting.records.Click;
import io.tally.counting.records.DimensionCount;
import io.tally.counting.records.KeptValues;
import io.tally.counting.records.MinuteCount;
import io.tally.counting.records.PeriodRows;
import io.tally.counting.records.PeriodTotals;
import io.tally.counting.serde.LinkPeriodsSerializer;
import io.tally.event.ClickEvent;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.stream.IntStream;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.junit.jupiter.api.Test;

/**
 * Tests for {@link LinkPeriods}: which rows a link's clicks make, and when a period's rows are due.
 */
class LinkPeriodsTest {

  private static final long HOUR_START = LinkPeriods.hourOf(at(0));
  private static final long DAY_START = LinkPeriods.dayOf(at(0));

  private static final int ALL = ClickTally.UNBOUNDED;

  private final Rows rows = new Rows();

  @Test
  void clicksAddedOneByOneOrAsPartialsMakeTheSameRows() {
    Click[] clicks = {
      visit("1", "abc", at(1), "v1").withNewVisitor(true, true),
      botClick("2", "abc", at(2)),
      visit("3", "abc", at(MINUTE + 3), "v1"),
      visit("4", "abc", at(LinkPeriods.HOUR + 4), "v1").withNewVisitor(true, false)
    };
    LinkPeriods oneByOne = new LinkPeriods();
    LinkPeriods partials = new LinkPeriods();
    for (Click click : clicks) {
      long minute = click.ts() - Math.floorMod(click.ts(), MINUTE);
      oneByOne.add(minute, click, ALL);
      partials.add(minute, new ClickTally().add(click), ALL);
    }
    Rows other = new Rows();

    oneByOne.writeAllChanges("abc", rows);
    partials.writeAllChanges("abc", other);

    assertThat(rows.all).containsExactlyInAnyOrderElementsOf(other.all);
    assertThat(rows.all)
        .contains(
            new MinuteCount("abc", at(0), 1, 1),
            new MinuteCount("abc", at(MINUTE), 1, 0),
            new PeriodTotals("abc", HOUR_START, 2, 1, 1),
            new PeriodTotals("abc", HOUR_START + LinkPeriods.HOUR, 1, 0, 1),
            new PeriodTotals("abc", DAY_START, 3, 1, 1),
            new DimensionCount("abc", HOUR_START, ClickTally.COUNTRY, "DE", 2),
            new DimensionCount("abc", HOUR_START, ClickTally.BOT_KIND, "crawler", 1),
            new DayDimension(new DimensionCount("abc", DAY_START, ClickTally.COUNTRY, "DE", 3)),
            new DayDimension(
                new DimensionCount("abc", DAY_START, ClickTally.BOT_KIND, "crawler", 1)));
  }

  @Test
  void aDaySketchesItsNewVisitorsKeysAlikeFromClicksAndPartialsAndKeepsThemThroughState()
      throws Exception {
    Click[] clicks = {
      visit("1", "abc", at(1), "v1", 11).withNewVisitor(true, true),
      visit("2", "abc", at(2), "v1", 11),
      visit("3", "abc", at(MINUTE + 3), "v2", 22).withNewVisitor(true, true),
      visit("4", "abc", at(MINUTE + 4), "", ClickEvent.NO_RANGE_VISITOR),
      botClick("5", "abc", at(MINUTE + 5))
    };
    LinkPeriods oneByOne = new LinkPeriods();
    LinkPeriods partials = new LinkPeriods();
    for (Click click : clicks) {
      long minute = click.ts() - Math.floorMod(click.ts(), MINUTE);
      oneByOne.add(minute, click, ALL);
      partials.add(minute, new ClickTally().addToPartial(click), ALL);
    }
    Rows fromPartials = new Rows();

    oneByOne.writeAllChanges("abc", rows);
    partials.writeAllChanges("abc", fromPartials);

    assertThat(daySketch(rows))
        .isEqualTo(daySketch(fromPartials))
        .isEqualTo(Clicks.visitorSketch(11, 22));
    assertThat(rows.all)
        .filteredOn(PeriodTotals.class::isInstance)
        .map(PeriodTotals.class::cast)
        .filteredOn(row -> row.periodStart() == HOUR_START)
        .singleElement()
        .satisfies(hour -> assertThat(hour.visitorSketch()).isNull());

    LinkPeriods restored = roundTrip(partials);
    restored.add(
        at(2 * MINUTE),
        new ClickTally()
            .addToPartial(visit("6", "abc", at(2 * MINUTE), "v3", 33).withNewVisitor(true, true)),
        ALL);
    Rows afterRestore = new Rows();
    restored.writeAllChanges("abc", afterRestore);

    assertThat(daySketch(afterRestore)).isEqualTo(Clicks.visitorSketch(11, 22, 33));
  }

  @Test
  void aDayStoresNoSketchWhileOneOfItsNewVisitorsBroughtNoKey() {
    LinkPeriods link = new LinkPeriods();
    link.add(
        at(0),
        new ClickTally()
            .addToPartial(visit("1", "abc", at(1), "v1", 11).withNewVisitor(true, true))
            .addToPartial(
                visit("2", "abc", at(2), "v2", ClickEvent.NO_RANGE_VISITOR)
                    .withNewVisitor(true, true)),
        ALL);

    link.writeAllChanges("abc", rows);

    assertThat(rows.all).contains(new PeriodTotals("abc", DAY_START, 2, 0, 2, null));
  }

  private static byte[] daySketch(Rows rows) {
    return rows.all.stream()
        .filter(PeriodTotals.class::isInstance)
        .map(PeriodTotals.class::cast)
        .filter(row -> row.periodStart() == DAY_START)
        .reduce((first, last) -> last)
        .orElseThrow()
        .visitorSketch();
  }

  @Test
  void aChangedPeriodIsDueWhenItHasEndedOrChangedInALiveMinute() {
    LinkPeriods link = new LinkPeriods();
    link.add(at(0), new ClickTally().add(visit("1", "abc", at(1), "")), ALL);
    link.add(at(MINUTE), new ClickTally().add(visit("2", "abc", at(MINUTE + 1), "")), ALL);

    link.writeChanges(
        "abc",
        new LinkPeriods.Due(at(MINUTE), Long.MAX_VALUE, Long.MAX_VALUE, Long.MAX_VALUE),
        false,
        rows);
    assertThat(rows.all)
        .as("only the minute that ended")
        .containsExactly(new MinuteCount("abc", at(0), 1, 0));

    link.writeChanges(
        "abc",
        new LinkPeriods.Due(at(MINUTE), at(2 * MINUTE), Long.MAX_VALUE, Long.MAX_VALUE),
        false,
        rows);
    assertThat(rows.all.subList(1, rows.all.size()))
        .as("the live minute, but not yet the hour and day it changed")
        .containsExactly(new MinuteCount("abc", at(MINUTE), 1, 0));

    link.writeChanges(
        "abc",
        new LinkPeriods.Due(at(MINUTE), Long.MAX_VALUE, at(2 * MINUTE), Long.MAX_VALUE),
        false,
        rows);
    assertThat(rows.all.subList(2, rows.all.size()))
        .as("the hour and day the live minute changed, with their breakdowns")
        .doesNotHaveAnyElementsOfTypes(MinuteCount.class)
        .contains(
            new PeriodTotals("abc", HOUR_START, 2, 0, 0),
            new PeriodTotals("abc", DAY_START, 2, 0, 0));
    assertThat(link.hasChanges()).isFalse();
  }

  @Test
  void aDaysRowCarriesItsSketchOnlyWhenANewVisitorCameSinceItWasLastSent() throws Exception {
    LinkPeriods link = new LinkPeriods();
    link.add(
        at(0),
        new ClickTally()
            .addToPartial(visit("1", "abc", at(1), "v1", 11).withNewVisitor(true, true)),
        ALL);
    link.writeAllChanges("abc", rows);
    // The same visitor again, and a bot.
    link.add(
        at(MINUTE),
        new ClickTally()
            .addToPartial(visit("2", "abc", at(MINUTE), "v1", 11))
            .addToPartial(botClick("3", "abc", at(MINUTE + 1))),
        ALL);
    link.writeAllChanges("abc", rows);
    link.add(
        at(2 * MINUTE),
        new ClickTally()
            .addToPartial(visit("4", "abc", at(2 * MINUTE), "v2", 22).withNewVisitor(true, true)),
        ALL);
    link.writeAllChanges("abc", rows);
    // Restored from state, a period sends its sketch again: whether its last row went out is not
    // known.
    LinkPeriods restored = roundTrip(link);
    restored.add(
        at(3 * MINUTE), new ClickTally().addToPartial(botClick("5", "abc", at(3 * MINUTE))), ALL);
    restored.writeAllChanges("abc", rows);

    assertThat(rows.all)
        .filteredOn(PeriodTotals.class::isInstance)
        .map(PeriodTotals.class::cast)
        .filteredOn(row -> row.periodStart() == DAY_START)
        .containsExactly(
            new PeriodTotals("abc", DAY_START, 1, 0, 1, Clicks.visitorSketch(11)),
            PeriodTotals.keepingSketch("abc", DAY_START, 2, 1, 1),
            new PeriodTotals("abc", DAY_START, 3, 1, 2, Clicks.visitorSketch(11, 22)),
            new PeriodTotals("abc", DAY_START, 3, 2, 2, Clicks.visitorSketch(11, 22)));
  }

  @Test
  void aFullBreakdownSendsItsKeptValuesWhenFirstWrittenAndWhenAKeptValueIsDisplaced()
      throws Exception {
    List<String> byRank = byRank(10);
    String lowest = byRank.get(0);
    String low = byRank.get(1);
    String middle = byRank.get(2);
    String high = byRank.get(9);
    LinkPeriods link = new LinkPeriods();
    link.add(
        at(0), tally(referred("1", "abc", at(0), low), referred("2", "abc", at(0), middle)), 2);

    link.writeChanges("abc", LinkPeriods.Due.ALL, true, rows);
    assertThat(rows.all).as("not full yet").noneMatch(KeptValues.class::isInstance);

    rows.all.clear();
    link.add(at(MINUTE), tally(referred("3", "abc", at(MINUTE), high)), 2);
    link.writeChanges("abc", LinkPeriods.Due.ALL, true, rows);
    assertThat(rows.all)
        .as("full: its kept values, then every row of it")
        .containsSubsequence(
            new KeptValues("abc", HOUR_START, ClickTally.REFERRER, new String[] {low, middle}),
            new DimensionCount("abc", HOUR_START, ClickTally.REFERRER, low, 1))
        .containsSubsequence(
            new DayKept(
                new KeptValues("abc", DAY_START, ClickTally.REFERRER, new String[] {low, middle})),
            new DayDimension(new DimensionCount("abc", DAY_START, ClickTally.REFERRER, low, 1)))
        .contains(
            new DimensionCount("abc", HOUR_START, ClickTally.REFERRER, middle, 1),
            new DimensionCount("abc", HOUR_START, ClickTally.REFERRER, DimensionCount.OTHER, 1))
        .as("only full breakdowns")
        .doesNotContain(new KeptValues("abc", HOUR_START, ClickTally.COUNTRY, new String[] {"DE"}));

    rows.all.clear();
    link.add(at(2 * MINUTE), tally(referred("4", "abc", at(2 * MINUTE), high)), 2);
    link.writeChanges("abc", LinkPeriods.Due.ALL, true, rows);
    assertThat(rows.all)
        .as("sent once; then only what changed")
        .noneMatch(r -> r instanceof KeptValues || r instanceof DayKept)
        .contains(
            new DimensionCount("abc", HOUR_START, ClickTally.REFERRER, DimensionCount.OTHER, 2))
        .doesNotContain(new DimensionCount("abc", HOUR_START, ClickTally.REFERRER, low, 1));

    rows.all.clear();
    link.add(at(3 * MINUTE), tally(referred("5", "abc", at(3 * MINUTE), lowest)), 2);
    link.writeChanges("abc", LinkPeriods.Due.ALL, true, rows);
    assertThat(rows.all)
        .as("a value of less rank displaced one: the displaced one's row must go")
        .containsSubsequence(
            new KeptValues("abc", HOUR_START, ClickTally.REFERRER, new String[] {low, lowest}),
            new DimensionCount("abc", HOUR_START, ClickTally.REFERRER, lowest, 1))
        .contains(
            new DimensionCount("abc", HOUR_START, ClickTally.REFERRER, low, 1),
            new DimensionCount("abc", HOUR_START, ClickTally.REFERRER, DimensionCount.OTHER, 3));

    rows.all.clear();
    LinkPeriods restored = roundTrip(link);
    restored.add(at(4 * MINUTE), tally(referred("6", "abc", at(4 * MINUTE), high)), 2);
    restored.writeChanges("abc", LinkPeriods.Due.ALL, true, rows);
    assertThat(rows.all)
        .as("periods back from state send their kept values again")
        .contains(
            new KeptValues("abc", HOUR_START, ClickTally.REFERRER, new String[] {low, lowest}));

    rows.all.clear();
    LinkPeriods alone = new LinkPeriods();
    alone.add(at(0), tally(referred("7", "abc", at(0), low), referred("8", "abc", at(0), high)), 1);
    alone.writeChanges("abc", LinkPeriods.Due.ALL, false, rows);
    assertThat(rows.all)
        .as("tables that only this object writes are never cleared")
        .noneMatch(r -> r instanceof KeptValues || r instanceof DayKept);
  }

  /** {@code n} referrer hosts, those that a full breakdown keeps first. */
  private static List<String> byRank(int n) {
    return IntStream.range(0, n)
        .mapToObj(i -> "site" + i + ".example")
        .sorted(ClickTally.BY_RANK)
        .toList();
  }

  private static ClickTally tally(Click... clicks) {
    ClickTally tally = new ClickTally();
    for (Click click : clicks) {
      tally.add(click);
    }
    return tally;
  }

  @Test
  void aPeriodIsForgottenOnceItEndsAndTheLinkWhenNothingIsOpen() {
    LinkPeriods link = new LinkPeriods();
    link.add(at(0), new ClickTally().add(visit("1", "abc", at(1), "")), ALL);

    assertThat(link.dropEndedBy(at(MINUTE))).isTrue();
    assertThat(link.minutes()).isEmpty();
    assertThat(link.hours()).hasSize(1);
    link.dropEndedBy(DAY_START + LinkPeriods.DAY);
    assertThat(link.isEmpty()).isTrue();
  }

  @Test
  void storedPeriodsComeBackWrittenAndOnlyTheirNewChangesAreWrittenAgain() throws Exception {
    LinkPeriods link = new LinkPeriods();
    link.add(
        at(0),
        new ClickTally()
            .add(visit("1", "abc", at(1), "v1").withNewVisitor(true, true))
            .add(botClick("2", "abc", at(2))),
        ALL);
    link.writeAllChanges("abc", rows);
    LinkPeriods restored = roundTrip(link);

    assertThat(restored).isEqualTo(link);
    assertThat(restored.hasChanges()).isFalse();
    Click fromFrance =
        new Click(
            Clicks.id("3"),
            "abc",
            at(3),
            "",
            "",
            ClickEvent.NO_RANGE_VISITOR,
            "FR",
            "",
            "Chrome",
            "Windows",
            "desktop",
            false,
            false);
    restored.add(at(0), new ClickTally().add(fromFrance), ALL);
    Rows after = new Rows();
    restored.writeAllChanges("abc", after);
    assertThat(after.all)
        .filteredOn(DimensionCount.class::isInstance)
        .containsExactlyInAnyOrder(
            new DimensionCount("abc", HOUR_START, ClickTally.COUNTRY, "FR", 1),
            new DimensionCount("abc", HOUR_START, ClickTally.REFERRER, "", 2),
            new DimensionCount("abc", HOUR_START, ClickTally.BROWSER, "Chrome", 2),
            new DimensionCount("abc", HOUR_START, ClickTally.OS, "Windows", 2),
            new DimensionCount("abc", HOUR_START, ClickTally.DEVICE, "desktop", 2));
    assertThat(LinkPeriodsSerializer.INSTANCE.copy(restored)).isEqualTo(restored);
  }

  @Test
  void unwrittenChangesAreStoredWithTheirPeriods() throws Exception {
    LinkPeriods link = new LinkPeriods();
    link.add(at(0), new ClickTally().add(visit("1", "abc", at(1), "")), ALL);
    link.writeAllChanges("abc", rows);
    link.add(at(0), new ClickTally().add(botClick("2", "abc", at(2))), ALL);
    LinkPeriods restored = roundTrip(link);
    Rows fromOriginal = new Rows();
    Rows fromRestored = new Rows();

    link.writeChanges(
        "abc",
        new LinkPeriods.Due(Long.MIN_VALUE, at(MINUTE), at(MINUTE), Long.MAX_VALUE),
        false,
        fromOriginal);
    restored.writeChanges(
        "abc",
        new LinkPeriods.Due(Long.MIN_VALUE, at(MINUTE), at(MINUTE), Long.MAX_VALUE),
        false,
        fromRestored);

    assertThat(fromRestored.all)
        .isEqualTo(fromOriginal.all)
        .contains(
            new MinuteCount("abc", at(0), 1, 1),
            new DimensionCount("abc", HOUR_START, ClickTally.BOT_KIND, "crawler", 1))
        .doesNotContain(new DimensionCount("abc", HOUR_START, ClickTally.COUNTRY, "DE", 1));
    assertThat(restored.hasChanges()).isFalse();
  }

  @Test
  void aPeriodRecountedWholeIsHeldUntilWholeThenReplacesItsRowsAndEmptiesEveryBreakdown()
      throws Exception {
    Recount recount = Recount.whole(DAY_START, at(30 * MINUTE), MINUTE);
    LinkPeriods link = new LinkPeriods();
    link.add(at(0), new ClickTally().add(visit("1", "abc", at(1), "")), ALL, recount);
    link.add(at(0), new ClickTally().add(botClick("2", "abc", at(2))), ALL, recount);
    // Kept across a restore, with the period.
    link = roundTrip(link);

    // The backlog's flush writes every changed period, but not those still being recounted.
    link.writeChanges(
        "abc",
        new LinkPeriods.Due(Long.MAX_VALUE, Long.MIN_VALUE, Long.MIN_VALUE, at(0)),
        true,
        rows);
    assertThat(rows.all).isEmpty();
    assertThat(link.hasChanges()).isTrue();

    // Its minute closed: whole, replacing what was stored.
    link.writeChanges(
        "abc",
        new LinkPeriods.Due(at(MINUTE), Long.MAX_VALUE, Long.MAX_VALUE, at(MINUTE)),
        true,
        rows);
    assertThat(rows.all).containsExactly(new Replacing(new MinuteCount("abc", at(0), 1, 1)));

    // Caught up: the open hour and day are whole too. Every dimension is emptied, then written.
    rows.all.clear();
    link.writeChanges("abc", LinkPeriods.Due.ALL, true, rows);
    assertThat(rows.all)
        .startsWith(
            new Replacing(new PeriodTotals("abc", HOUR_START, 1, 1, 0)),
            new KeptValues("abc", HOUR_START, ClickTally.COUNTRY, new String[0]))
        .contains(
            new KeptValues("abc", HOUR_START, ClickTally.BOT_KIND, new String[0]),
            new DimensionCount("abc", HOUR_START, ClickTally.BOT_KIND, "crawler", 1),
            new Replacing(new DayTotals(new PeriodTotals("abc", DAY_START, 1, 1, 0, null))),
            new DayKept(new KeptValues("abc", DAY_START, ClickTally.REFERRER, new String[0])))
        .filteredOn(KeptValues.class::isInstance)
        .hasSize(ClickTally.DIMENSIONS.length);

    // Written whole once; what comes after only raises its rows.
    rows.all.clear();
    link.add(at(0), new ClickTally().add(visit("3", "abc", at(3), "")), ALL, recount);
    link.writeChanges("abc", LinkPeriods.Due.ALL, true, rows);
    assertThat(rows.all)
        .contains(new MinuteCount("abc", at(0), 2, 1), new PeriodTotals("abc", HOUR_START, 2, 1, 0))
        .noneMatch(row -> row instanceof Replacing || row instanceof KeptValues);
  }

  @Test
  void aPeriodRecountedInPartNeverClearsABreakdownAndOneAfterTheRecountIsWrittenAsEver() {
    Recount recount = Recount.partial(at(0), MINUTE);
    LinkPeriods link = new LinkPeriods();
    for (int i = 0; i < 3; i++) {
      // The hour and day started before the run: in part. The minute at(MINUTE) too, within skew.
      link.add(at(0), new ClickTally().add(referred("r" + i, "abc", at(i), "s" + i)), 2, recount);
    }
    link.add(
        at(2 * MINUTE),
        new ClickTally().add(referred("late", "abc", at(2 * MINUTE), "x")),
        2,
        recount);
    link.writeChanges("abc", LinkPeriods.Due.ALL, true, rows);

    assertThat(rows.all)
        .contains(
            new MinuteCount("abc", at(0), 3, 0),
            new DimensionCount("abc", HOUR_START, ClickTally.REFERRER, DimensionCount.OTHER, 2))
        .noneMatch(row -> row instanceof Replacing || row instanceof KeptValues);
  }

  private static LinkPeriods roundTrip(LinkPeriods link) throws Exception {
    DataOutputSerializer out = new DataOutputSerializer(64);
    LinkPeriodsSerializer.INSTANCE.serialize(link, out);
    return LinkPeriodsSerializer.INSTANCE.deserialize(
        new DataInputDeserializer(out.getCopyOfBuffer()));
  }

  @Test
  void anHourKeepsTheValuesOfLeastRankWhateverTheirOrderAndCountsTheRestUnderOther() {
    List<Click> flood = new ArrayList<>();
    for (int i = 0; i < 1_000; i++) {
      flood.add(referred("f" + i, "abc", at(i), "spam" + i + ".example"));
    }
    List<Click> reversed = new ArrayList<>(flood);
    Collections.reverse(reversed);
    Rows backward = new Rows();
    LinkPeriods forwardLink = new LinkPeriods();
    LinkPeriods backwardLink = new LinkPeriods();
    flood.forEach(click -> forwardLink.add(at(0), tally(click), 3));
    reversed.forEach(click -> backwardLink.add(at(0), tally(click), 3));

    forwardLink.writeAllChanges("abc", rows);
    backwardLink.writeAllChanges("abc", backward);

    List<String> kept =
        flood.stream().map(Click::referrer).sorted(ClickTally.BY_RANK).limit(3).toList();
    assertThat(rows.all)
        .filteredOn(DimensionCount.class::isInstance)
        .map(DimensionCount.class::cast)
        .filteredOn(row -> row.dimension().equals(ClickTally.REFERRER))
        .containsExactlyInAnyOrder(
            new DimensionCount("abc", HOUR_START, ClickTally.REFERRER, kept.get(0), 1),
            new DimensionCount("abc", HOUR_START, ClickTally.REFERRER, kept.get(1), 1),
            new DimensionCount("abc", HOUR_START, ClickTally.REFERRER, kept.get(2), 1),
            new DimensionCount("abc", HOUR_START, ClickTally.REFERRER, DimensionCount.OTHER, 997));
    assertThat(rows.all)
        .contains(new DimensionCount("abc", HOUR_START, ClickTally.COUNTRY, "DE", 1_000));
    assertThat(backward.all)
        .as("met in the opposite order")
        .containsExactlyInAnyOrderElementsOf(rows.all);
  }

  /** Every row in the order written. */
  private static final class Rows implements PeriodRows {
    final List<Record> all = new ArrayList<>();

    @Override
    public void minute(MinuteCount row) {
      all.add(row);
    }

    @Override
    public void hour(PeriodTotals row) {
      all.add(row);
    }

    @Override
    public void recountedMinute(MinuteCount row) {
      all.add(new Replacing(row));
    }

    @Override
    public void recountedHour(PeriodTotals row) {
      all.add(new Replacing(row));
    }

    @Override
    public void recountedDay(PeriodTotals row) {
      all.add(new Replacing(new DayTotals(row)));
    }

    @Override
    public void day(PeriodTotals row) {
      all.add(row);
    }

    @Override
    public void dimension(DimensionCount row) {
      all.add(row);
    }

    @Override
    public void dayDimension(DimensionCount row) {
      all.add(new DayDimension(row));
    }

    @Override
    public void keptInHour(KeptValues kept) {
      all.add(kept);
    }

    @Override
    public void keptInDay(KeptValues kept) {
      all.add(new DayKept(kept));
    }
  }

  /** A minute's, hour's or day's row that replaces the stored one. */
  private record Replacing(Record row) {}

  /** A row of the daily breakdowns, told apart from an hour's. */
  private record DayDimension(DimensionCount row) {}

  /** A day's totals, told apart from an hour's. */
  private record DayTotals(PeriodTotals row) {}

  /** A daily breakdown's kept values, told apart from an hour's. */
  private record DayKept(KeptValues kept) {}
}
