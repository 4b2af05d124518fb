package io.tally.clickjob.functions;

import static io.tally.counting.Clicks.MINUTE;
import static io.tally.counting.Clicks.at;
import static io.tally.counting.Clicks.botClick;
import static io.tally.counting.Clicks.click;
import static org.assertj.core.api.Assertions.assertThat;

import io.tally.clickjob.ClickCountJobGraphs;
import io.tally.clickjob.ClickJobOptions;
import io.tally.counting.Clicks;
import io.tally.counting.periods.ClickTally;
import io.tally.counting.periods.MinuteTotals;
import io.tally.counting.records.Click;
import io.tally.counting.records.MinuteCount;
import io.tally.event.ClickEvent;
import java.util.List;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Tests for {@link PreAggregateMinutes} as {@code ClickCountJob} configures it: partial tallies per
 * (link, minute), each stamped with its minute, sent before the watermark that closes the minute,
 * on a beat while the minute is live and before every checkpoint barrier.
 */
class PreAggregateMinutesTest {

  private OneInputStreamOperatorTestHarness<Click, MinuteTotals> harness;

  @BeforeEach
  void setUp() throws Exception {
    harness =
        ClickCountJobGraphs.preAggregateHarness(ClickJobOptions.parse("--allowed-lateness", "2m"));
    harness.setProcessingTime(0);
    harness.open();
  }

  @AfterEach
  void tearDown() throws Exception {
    harness.close();
  }

  @Test
  void sendsAMinutesPartialsPerLinkBeforeTheWatermarkThatReachesItsEnd() throws Exception {
    harness.processElement(click("1", "abc", at(1_000)), at(1_000));
    harness.processElement(botClick("2", "abc", at(59_000)), at(59_000));
    harness.processElement(click("3", "abc", at(MINUTE + 1)), at(MINUTE + 1));
    harness.processElement(click("4", "xyz", at(2_000)), at(2_000));
    harness.processWatermark(at(MINUTE - 2));
    assertThat(harness.extractOutputValues()).as("nothing before the minute's end").isEmpty();

    harness.processWatermark(at(MINUTE - 1));

    List<Object> output = List.copyOf(harness.getOutput());
    assertThat(output).hasSize(4);
    assertThat(output.get(0)).isEqualTo(new Watermark(at(MINUTE - 2)));
    assertThat(output.subList(1, 3))
        .extracting(o -> counted((StreamRecord<?>) o))
        .containsExactlyInAnyOrder(
            new MinuteCount("abc", at(0), 1, 1) + "@" + at(0),
            new MinuteCount("xyz", at(0), 1, 0) + "@" + at(0));
    assertThat(output.get(3))
        .as("the watermark after the partials")
        .isEqualTo(new Watermark(at(MINUTE - 1)));

    harness.processWatermark(at(2 * MINUTE - 1));
    assertThat(counted((StreamRecord<?>) List.copyOf(harness.getOutput()).get(4)))
        .isEqualTo(new MinuteCount("abc", at(MINUTE), 1, 0) + "@" + at(MINUTE));
  }

  @Test
  void aClickWithinTheLatenessAfterItsMinuteFiredGoesBeforeTheNextWatermark() throws Exception {
    harness.processElement(click("1", "abc", at(1_000)), at(1_000));
    harness.processWatermark(at(MINUTE + 30_000));
    harness.processElement(click("2", "abc", at(2_000)), at(2_000));
    harness.processWatermark(at(MINUTE + 31_000));

    assertThat(harness.extractOutputValues())
        .extracting(MinuteTotals::count)
        .containsExactly(new MinuteCount("abc", at(0), 1, 0), new MinuteCount("abc", at(0), 1, 0));
  }

  @Test
  void startsAfreshAfterEachSendSoThePartialsAddUpToTheClicks() throws Exception {
    harness.processElement(click("1", "abc", at(1_000)), at(1_000));
    harness.prepareSnapshotPreBarrier(1L);
    harness.processElement(click("2", "abc", at(3_000)), at(3_000));
    harness.processElement(click("3", "abc", at(4_000)), at(4_000));
    harness.processWatermark(at(MINUTE - 1));

    assertThat(harness.extractOutputValues())
        .extracting(p -> p.tally().clicks)
        .containsExactly(1L, 2L);
  }

  @Test
  void sendsEverythingBeforeACheckpointBarrierSoNoClickIsOnlyInMemory() throws Exception {
    harness.processElement(click("1", "abc", at(1_000)), at(1_000));
    harness.processElement(click("2", "abc", at(5 * MINUTE)), at(5 * MINUTE));

    harness.prepareSnapshotPreBarrier(1L);

    assertThat(harness.extractOutputValues())
        .extracting(MinuteTotals::count)
        .containsExactly(
            new MinuteCount("abc", at(0), 1, 0), new MinuteCount("abc", at(5 * MINUTE), 1, 0));
  }

  @Test
  void sendsEverythingWhenTheJobFinishesSoABoundedRunLosesNoClick() throws Exception {
    harness.processElement(click("1", "abc", at(1_000)), at(1_000));
    harness.processElement(click("2", "xyz", at(5 * MINUTE)), at(5 * MINUTE));

    harness.getOneInputOperator().finish();

    assertThat(harness.extractOutputValues())
        .extracting(MinuteTotals::count)
        .containsExactly(
            new MinuteCount("abc", at(0), 1, 0), new MinuteCount("xyz", at(5 * MINUTE), 1, 0));
  }

  @Test
  void sendsALiveMinuteOnEachBeatWithoutWaitingForItsEnd() throws Exception {
    long beat = ClickCountJobGraphs.livePartialsEvery().toMillis();
    harness.setProcessingTime(at(1_000));
    harness.processElement(click("1", "abc", at(1_000)), at(1_000));
    harness.setProcessingTime(at(1_000) + beat - 1);
    assertThat(harness.extractOutputValues()).isEmpty();

    harness.setProcessingTime(at(1_000) + beat);

    assertThat(harness.extractOutputValues())
        .extracting(MinuteTotals::count)
        .containsExactly(new MinuteCount("abc", at(0), 1, 0));
  }

  @Test
  void holdsABacklogsMinuteUntilTheWatermarkReachesItsEnd() throws Exception {
    harness.setProcessingTime(at(10 * MINUTE)); // the wall clock is ten minutes past the minute
    harness.processElement(click("1", "abc", at(1_000)), at(1_000));
    harness.setProcessingTime(at(10 * MINUTE) + 10_000);
    assertThat(harness.extractOutputValues()).isEmpty();

    harness.processWatermark(at(MINUTE - 1));

    assertThat(harness.extractOutputValues()).hasSize(1);
  }

  @Test
  void addsAClickToTheMinuteOfItsOwnTimeNotOfItsRecords() throws Exception {
    // A copy replayed two minutes later: its record's timestamp is not its time.
    harness.processElement(click("1", "abc", at(1_000)), at(2 * MINUTE + 1_000));
    harness.processWatermark(at(3 * MINUTE));

    assertThat(harness.extractOutputValues())
        .extracting(MinuteTotals::count)
        .containsExactly(new MinuteCount("abc", at(0), 1, 0));
  }

  @Test
  void sendsAtOnceWhenTooManyTalliesAreOpen() throws Exception {
    for (int link = 0; link < PreAggregateMinutes.MAX_OPEN_TALLIES; link++) {
      harness.processElement(click("c" + link, "link" + link, at(1_000)), at(1_000));
    }

    assertThat(harness.extractOutputValues()).hasSize(PreAggregateMinutes.MAX_OPEN_TALLIES);
  }

  @Test
  void aFloodOfValuesIsSentInWholeTalliesNoLargerThanAnHoursBreakdowns() throws Exception {
    // 200 values per dimension: a tally is sent once it holds 200 per dimension there is.
    int bound = 200 * ClickTally.DIMENSIONS.length;
    int hosts = 2_000;
    for (int i = 0; i < hosts; i++) {
      Click fromHost =
          new Click(
              Clicks.id("flood-" + i),
              "abc",
              at(1_000 + i),
              "",
              "",
              ClickEvent.NO_RANGE_VISITOR,
              "DE",
              "host-" + i + ".example",
              "Chrome",
              "Windows",
              "desktop",
              false,
              false);
      harness.processElement(fromHost, at(1_000 + i));
    }
    assertThat(harness.extractOutputValues()).as("sent before the minute's end").hasSize(1);
    harness.processWatermark(at(MINUTE - 1));

    List<MinuteTotals> partials = harness.extractOutputValues();
    assertThat(partials).hasSize(2);
    assertThat(partials).allSatisfy(p -> assertThat(p.tally().size).isLessThanOrEqualTo(bound));
    assertThat(partials.stream().mapToLong(p -> p.tally().clicks).sum()).isEqualTo(hosts);
    for (int i = 0; i < hosts; i += 97) {
      String host = "host-" + i + ".example";
      assertThat(partials.stream().mapToLong(p -> p.tally().count("referrer", host)).sum())
          .as(host)
          .isEqualTo(1);
    }
  }

  private static String counted(StreamRecord<?> record) {
    return ((MinuteTotals) record.getValue()).count() + "@" + record.getTimestamp();
  }
}
