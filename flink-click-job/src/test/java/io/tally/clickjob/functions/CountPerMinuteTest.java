package io.tally.clickjob.functions;

import static io.tally.clickjob.Clicks.MINUTE;
import static io.tally.clickjob.Clicks.at;
import static io.tally.clickjob.Clicks.botClick;
import static io.tally.clickjob.Clicks.click;
import static org.assertj.core.api.Assertions.assertThat;

import io.tally.clickjob.ClickJobOptions;
import io.tally.clickjob.ClickCountJobGraphs;
import io.tally.clickjob.records.Click;
import io.tally.clickjob.records.ClickTally;
import io.tally.clickjob.records.MinuteCount;
import io.tally.clickjob.records.MinuteTotals;
import java.util.List;
import java.util.stream.Collectors;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Tests for the job's per-minute window ({@link AddPartialTallies}, {@link EmitMinuteCount} and
 * {@link EarlyFiringTrigger} in the window exactly as {@code ClickCountJob} configures it), fed one partial
 * tally per click as {@link PreAggregateMinutes} would send them: early firings of partial totals in
 * processing time, on-time firing, late firings that update the row, and partials from several subtasks
 * adding up.
 */
class CountPerMinuteTest {

  private KeyedOneInputStreamOperatorTestHarness<String, MinuteTotals, MinuteTotals> harness;

  @BeforeEach
  void setUp() throws Exception {
    ClickJobOptions options = ClickJobOptions.parse("--allowed-lateness", "2m", "--early-firing-interval", "2s");
    harness = ClickCountJobGraphs.windowHarness(options);
    harness.setProcessingTime(0);
    harness.open();
  }

  @AfterEach
  void tearDown() throws Exception {
    harness.close();
  }

  @Test
  void firesOnceTheWatermarkPassesTheMinuteWithHumanAndBotTotals() throws Exception {
    send(click("1", "abc", at(1_000)));
    send(click("2", "abc", at(59_999)));
    send(botClick("3", "abc", at(30_000)));
    send(click("4", "xyz", at(MINUTE + 5)));

    harness.processWatermark(at(MINUTE - 2));
    assertThat(counts()).isEmpty();

    harness.processWatermark(at(MINUTE - 1));
    assertThat(counts()).containsExactly(new MinuteCount("abc", at(0), 2, 1));
  }

  @Test
  void aLateClickWithinTheLatenessRefiresTheSameMinuteWithTheFullTotal() throws Exception {
    send(click("1", "abc", at(1_000)));
    harness.processWatermark(at(MINUTE + 30_000));
    send(click("2", "abc", at(2_000)));

    assertThat(counts()).containsExactly(new MinuteCount("abc", at(0), 1, 0), new MinuteCount("abc", at(0), 2, 0));
  }

  @Test
  void windowStateIsDroppedOnceTheLatenessHasPassed() throws Exception {
    send(click("1", "abc", at(1_000)));
    harness.processWatermark(at(MINUTE + 2 * MINUTE));

    assertThat(harness.numKeyedStateEntries()).isZero();
  }

  @Test
  void anOpenMinuteWithNewClicksFiresItsPartialTotalsAtTheNextEarlyFiringBoundary() throws Exception {
    send(click("1", "abc", at(1_000)));
    harness.setProcessingTime(1_999);
    assertThat(counts()).isEmpty();

    harness.setProcessingTime(2_000);
    assertThat(counts()).containsExactly(new MinuteCount("abc", at(0), 1, 0));

    // Nothing new: no firing. New clicks: the next boundary fires the larger total.
    harness.setProcessingTime(4_000);
    assertThat(counts()).hasSize(1);
    send(click("2", "abc", at(2_000)));
    send(botClick("3", "abc", at(3_000)));
    harness.setProcessingTime(6_000);
    harness.processWatermark(at(MINUTE - 1));

    assertThat(counts()).containsExactly(
        new MinuteCount("abc", at(0), 1, 0), new MinuteCount("abc", at(0), 2, 1), new MinuteCount("abc", at(0), 2, 1));
  }

  @Test
  void aBacklogsMinuteDoesNotFireEarlyOnlyWhenTheWatermarkPassesIt() throws Exception {
    harness.setProcessingTime(at(5 * MINUTE)); // the wall clock is five minutes past the minute: a backlog
    send(click("1", "abc", at(1_000)));
    harness.setProcessingTime(at(5 * MINUTE) + 10_000);
    assertThat(counts()).isEmpty();

    harness.processWatermark(at(MINUTE - 1));

    assertThat(counts()).containsExactly(new MinuteCount("abc", at(0), 1, 0));
  }

  @Test
  void theTallyCarriesNewVisitorsAndEveryDimension() throws Exception {
    send(click("1", "abc", at(1_000)).withNewVisitor(true, true));
    send(click("2", "abc", at(2_000)).withNewVisitor(true, false));
    send(click("3", "abc", at(3_000)));
    send(botClick("4", "abc", at(4_000)));
    harness.processWatermark(at(MINUTE - 1));

    ClickTally tally = harness.extractOutputValues().get(0).tally();
    assertThat(tally.clicks).isEqualTo(3);
    assertThat(tally.botClicks).isEqualTo(1);
    assertThat(tally.hourVisitors).isEqualTo(2);
    assertThat(tally.dayVisitors).isEqualTo(1);
    assertThat(tally.count(ClickTally.key(ClickTally.COUNTRY, "DE"))).isEqualTo(3);
    assertThat(tally.count(ClickTally.key(ClickTally.BROWSER, "Chrome"))).isEqualTo(3);
    assertThat(tally.count(ClickTally.key(ClickTally.BOT_KIND, "crawler"))).isEqualTo(1);
    assertThat(tally.count(ClickTally.key(ClickTally.COUNTRY, "US"))).as("bots are in no human dimension").isZero();
  }

  private List<MinuteCount> counts() {
    return harness.extractOutputValues().stream().map(MinuteTotals::count).collect(Collectors.toList());
  }

  /** One click as the partial tally a subtask would send for it, stamped with its minute's start. */
  private void send(Click click) throws Exception {
    long minute = Math.floorDiv(click.ts(), MINUTE) * MINUTE;
    harness.processElement(new MinuteTotals(click.code(), minute, new ClickTally().add(click)), minute);
  }
}
