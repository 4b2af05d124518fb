package io.tally.counting.serde;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.counting.periods.ClickTally;
import io.tally.counting.records.AggregateRow;
import io.tally.counting.records.DimensionCount;
import io.tally.counting.records.KeptValues;
import io.tally.counting.records.MinuteCount;
import io.tally.counting.records.PeriodTotals;
import java.io.IOException;
import java.util.List;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.junit.jupiter.api.Test;

/** Tests for {@link AggregateRowSerializer}. */
class AggregateRowSerializerTest {

  private static final long START = 1_764_410_400_000L;

  @Test
  void writesAndReadsBackARowOfEveryTable() throws IOException {
    List<AggregateRow> rows =
        List.of(
            AggregateRow.of(new MinuteCount("abc", START, 12, 3)),
            AggregateRow.hourOf(new PeriodTotals("abc", START, 40, 2, 17)),
            AggregateRow.dayOf(new PeriodTotals("abc", START, 400, 20, 170, new byte[] {1, 2, 3})),
            AggregateRow.dayOf(new PeriodTotals("abc", START, 0, 5, 0, new byte[0])),
            AggregateRow.dayOf(PeriodTotals.keepingSketch("abc", START, 401, 20, 170)),
            AggregateRow.hourOf(
                new DimensionCount("abc", START, ClickTally.REFERRER, "news.example", 9)),
            AggregateRow.dayOf(
                new DimensionCount("abc", START, ClickTally.COUNTRY, DimensionCount.OTHER, 4)),
            AggregateRow.hourOf(
                new KeptValues("abc", START, ClickTally.REFERRER, new String[] {"a.example"})),
            AggregateRow.dayOf(
                new KeptValues("abc", START, ClickTally.BROWSER, new String[] {"Chrome", "Ünï"})),
            AggregateRow.dayOf(new KeptValues("abc", START, ClickTally.OS, new String[0])),
            AggregateRow.replacing(new MinuteCount("abc", START, 2, 1)),
            AggregateRow.replacingHour(new PeriodTotals("abc", START, 0, 0, 0)),
            AggregateRow.replacingDay(new PeriodTotals("abc", START, 7, 1, 5, null)),
            AggregateRow.END_OF_ROUND);

    DataOutputSerializer out = new DataOutputSerializer(256);
    for (AggregateRow row : rows) {
      AggregateRowSerializer.INSTANCE.serialize(row, out);
    }
    DataInputDeserializer in = new DataInputDeserializer(out.getCopyOfBuffer());
    for (AggregateRow row : rows) {
      assertThat(AggregateRowSerializer.INSTANCE.deserialize(in)).isEqualTo(row);
    }
    assertThat(in.available()).isZero();
    assertThat(AggregateRowSerializer.INSTANCE.snapshotConfiguration().restoreSerializer())
        .isSameAs(AggregateRowSerializer.INSTANCE);
  }

  @Test
  void aDaysMissingSketchStaysMissingAndAnEmptyOneEmpty() throws IOException {
    PeriodTotals without = new PeriodTotals("abc", START, 1, 0, 1);
    PeriodTotals empty = new PeriodTotals("abc", START, 1, 0, 1, new byte[0]);

    assertThat(
            Bytes.roundTrip(AggregateRowSerializer.INSTANCE, AggregateRow.dayOf(without))
                .day()
                .visitorSketch())
        .isNull();
    assertThat(
            Bytes.roundTrip(AggregateRowSerializer.INSTANCE, AggregateRow.dayOf(empty))
                .day()
                .visitorSketch())
        .isEmpty();
  }
}
