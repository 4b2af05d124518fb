package io.tally.reconcile.functions;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.counting.Clicks;
import io.tally.counting.periods.ClickTally;
import io.tally.counting.records.Click;
import io.tally.counting.records.DimensionCount;
import io.tally.counting.records.MinuteCount;
import io.tally.counting.records.PeriodTotals;
import io.tally.counting.records.RecountKey;
import io.tally.counting.serde.RecountKeySerializer;
import io.tally.event.ClickEvent;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.util.OutputTag;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Tests for {@link RecountLinks}. The harness does not sort, so each test hands it its clicks in
 * the order BATCH mode would: by the serialized key, compared as signed bytes, then by the record's
 * timestamp; at the end of input the last link's rows are written.
 */
class RecountLinksTest {

  private static final long MINUTE = 60_000;
  private static final long HOUR = 60 * MINUTE;

  /** An hour boundary that is not a day boundary. */
  private static final long T0 = 1_764_000_000_000L - 1_764_000_000_000L % HOUR;

  private static final long DAY_START = T0 - T0 % (24 * HOUR);

  private static final String DISTINCT = "distinctClicks";

  private final List<StreamRecord<Click>> input = new ArrayList<>();
  private KeyedOneInputStreamOperatorTestHarness<RecountKey, Click, MinuteCount> harness;

  @BeforeEach
  void setUp() throws Exception {
    harness =
        new KeyedOneInputStreamOperatorTestHarness<>(
            new RecountLinks(200, DISTINCT), RecountLinks.KEY, RecountKeySerializer.TYPE);
    harness.open();
  }

  @AfterEach
  void tearDown() throws Exception {
    harness.close();
  }

  @Test
  void countsClicksPerLinkAndMinute() throws Exception {
    send(person("a", "abc", T0 + 1_000, "v1"));
    send(Clicks.botClick("b", "abc", T0 + 59_999));
    send(person("c", "xyz", T0 + 5, "v1"));
    send(Clicks.click("d", "abc", T0 + MINUTE));

    recount();

    assertThat(harness.extractOutputValues())
        .containsExactlyInAnyOrder(
            new MinuteCount("abc", T0, 1, 1),
            new MinuteCount("abc", T0 + MINUTE, 1, 0),
            new MinuteCount("xyz", T0, 1, 0));
  }

  @Test
  void countsAClickInTheMinuteOfItsOwnTimeAsTheStreamingJobDoes() throws Exception {
    // A copy replayed a minute later: its record's timestamp is not its time.
    input.add(new StreamRecord<>(Clicks.click("a", "abc", T0 + 10), T0 + MINUTE + 10));

    recount();

    assertThat(harness.extractOutputValues()).containsExactly(new MinuteCount("abc", T0, 1, 0));
  }

  @Test
  void countsEachClickOnceWhateverItsCopiesRecordsSay() throws Exception {
    Click click = person("a", "abc", T0 + 10, "v1");
    input.add(new StreamRecord<>(click, T0 + MINUTE));
    input.add(new StreamRecord<>(click, T0 + 10));
    input.add(new StreamRecord<>(click, T0 - MINUTE));
    send(Clicks.botClick("b", "abc", T0 + 20));
    input.add(new StreamRecord<>(Clicks.botClick("b", "abc", T0 + 20), T0 + HOUR));

    recount();

    assertThat(harness.extractOutputValues())
        .as("one person's click, one bot's")
        .containsExactly(new MinuteCount("abc", T0, 1, 1));
    assertThat(side(RecountLinks.DAYS))
        .containsExactly(new PeriodTotals("abc", DAY_START, 1, 1, 1));
    assertThat(distinctClicks()).isEqualTo(2);
  }

  @Test
  void countsEachVisitorOnceInEachHourAndDay() throws Exception {
    send(person("d", "abc", T0 + HOUR, "v1"));
    send(person("c", "abc", T0 + 2 * MINUTE, "v2"));
    send(person("b", "abc", T0 + MINUTE, "v1"));
    send(person("a", "abc", T0 + 1_000, "v1"));
    send(Clicks.botClick("e", "abc", T0 + 5));

    recount();

    assertThat(harness.extractOutputValues())
        .containsExactlyInAnyOrder(
            new MinuteCount("abc", T0, 1, 1),
            new MinuteCount("abc", T0 + MINUTE, 1, 0),
            new MinuteCount("abc", T0 + 2 * MINUTE, 1, 0),
            new MinuteCount("abc", T0 + HOUR, 1, 0));
    assertThat(side(RecountLinks.HOURS))
        .containsExactlyInAnyOrder(
            new PeriodTotals("abc", T0, 3, 1, 2), new PeriodTotals("abc", T0 + HOUR, 1, 0, 1));
    assertThat(side(RecountLinks.DAYS))
        .containsExactly(new PeriodTotals("abc", DAY_START, 4, 1, 2));
    assertThat(side(RecountLinks.DIMENSIONS))
        .contains(
            new DimensionCount("abc", T0, ClickTally.COUNTRY, "DE", 3),
            new DimensionCount("abc", T0, ClickTally.BOT_KIND, "crawler", 1),
            new DimensionCount("abc", T0 + HOUR, ClickTally.BROWSER, "Chrome", 1));
  }

  @Test
  void aVisitorIsNewAgainOnAnotherLinkAndAnotherDay() throws Exception {
    send(person("a", "abc", T0, "v1"));
    send(person("b", "xyz", T0 + MINUTE, "v1"));
    send(person("c", "abc", T0 + 24 * HOUR, "v1"));

    recount();

    assertThat(side(RecountLinks.DAYS))
        .containsExactlyInAnyOrder(
            new PeriodTotals("abc", DAY_START, 1, 0, 1),
            new PeriodTotals("abc", DAY_START + 24 * HOUR, 1, 0, 1),
            new PeriodTotals("xyz", DAY_START, 1, 0, 1));
    assertThat(distinctClicks()).isEqualTo(3);
  }

  @Test
  void marksAVisitorsDayOnItsFirstClickInTimeAsTheStreamingJobMeetsIt() throws Exception {
    // The later click's id sorts first: only the time in the key puts the earlier one first. The
    // earlier carries the visitor's key across days, the later none (the setting turned off between
    // them), so the day's sketch shows which click the day's mark went to.
    long key = 0x1234_5678_9ABC_DEF0L;
    send(Clicks.visit("early", "abc", T0, "v1", key));
    send(Clicks.visit("late", "abc", T0 + HOUR, "v1", ClickEvent.NO_RANGE_VISITOR));
    assertThat(Arrays.compare(idBytes("late"), idBytes("early"))).isNegative();

    recount();

    assertThat(side(RecountLinks.DAYS))
        .singleElement()
        .satisfies(day -> assertThat(day.visitorSketch()).isEqualTo(Clicks.visitorSketch(key)));
  }

  private static byte[] idBytes(String label) {
    return ByteBuffer.allocate(16)
        .putLong(Clicks.id(label).getMostSignificantBits())
        .putLong(Clicks.id(label).getLeastSignificantBits())
        .array();
  }

  private static Click person(String id, String code, long ts, String visitor) {
    return Clicks.visit(id, code, ts, visitor);
  }

  private void send(Click click) {
    input.add(new StreamRecord<>(click, click.ts()));
  }

  /** Hands the harness its input as BATCH mode sorts it, then ends the input. */
  private void recount() throws Exception {
    Comparator<StreamRecord<Click>> byKeyBytes =
        Comparator.comparing(r -> keyBytes(r.getValue()), Arrays::compare);
    input.sort(byKeyBytes.thenComparingLong(StreamRecord::getTimestamp));
    for (StreamRecord<Click> record : input) {
      harness.processElement(record);
    }
    harness.endInput();
  }

  private static byte[] keyBytes(Click click) {
    DataOutputSerializer out = new DataOutputSerializer(64);
    try {
      RecountKeySerializer.INSTANCE.serialize(RecountLinks.KEY.getKey(click), out);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
    return out.getCopyOfBuffer();
  }

  private long distinctClicks() {
    return (Long)
        harness
            .getEnvironment()
            .getAccumulatorRegistry()
            .getUserMap()
            .get(DISTINCT)
            .getLocalValue();
  }

  private <T> List<T> side(OutputTag<T> tag) {
    return harness.getSideOutput(tag).stream().map(StreamRecord::getValue).toList();
  }
}
