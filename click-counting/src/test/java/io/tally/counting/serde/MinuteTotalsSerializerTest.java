package io.tally.counting.serde;

import static io.tally.counting.Clicks.at;
import static io.tally.counting.Clicks.botClick;
import static io.tally.counting.Clicks.referred;
import static io.tally.counting.Clicks.visit;
import static org.assertj.core.api.Assertions.assertThat;

import io.tally.counting.periods.ClickTally;
import io.tally.counting.periods.MinuteTotals;
import java.io.IOException;
import org.junit.jupiter.api.Test;

/** Tests for {@link MinuteTotalsSerializer}. */
class MinuteTotalsSerializerTest {

  @Test
  void writesAndReadsBackEveryCountValueAndVisitorKey() throws IOException {
    ClickTally tally =
        new ClickTally()
            .addToPartial(visit("1", "abc", at(0), "ana", 42L).withNewVisitor(true, true))
            .addToPartial(visit("2", "abc", at(1), "bo", -7L).withNewVisitor(true, true))
            .addToPartial(referred("3", "abc", at(2), "news.example.org"))
            .addToPartial(botClick("4", "abc", at(3)));
    MinuteTotals partial = new MinuteTotals("abc", at(0), tally);

    MinuteTotals back = Bytes.roundTrip(MinuteTotalsSerializer.INSTANCE, partial);

    assertThat(back.code()).isEqualTo("abc");
    assertThat(back.minuteStart()).isEqualTo(at(0));
    assertThat(back.tally()).isEqualTo(tally);
    assertThat(back.tally().dayVisitorKeyCount).isEqualTo(2);
    assertThat(back.tally().count(ClickTally.REFERRER, "news.example.org")).isEqualTo(1);
    assertThat(back.tally().botClicks).isEqualTo(1);
  }

  @Test
  void writesOnlyTheSlotsInUse() throws IOException {
    ClickTally tally = new ClickTally().addToPartial(visit("1", "abc", at(0), "ana"));
    int used = Bytes.size(MinuteTotalsSerializer.INSTANCE, new MinuteTotals("abc", at(0), tally));
    // Room for more slots than are in use, as a tally grows its arrays.
    tally.values = java.util.Arrays.copyOf(tally.values, 64);
    tally.dimensions = java.util.Arrays.copyOf(tally.dimensions, 64);
    tally.counts = java.util.Arrays.copyOf(tally.counts, 64);

    assertThat(Bytes.size(MinuteTotalsSerializer.INSTANCE, new MinuteTotals("abc", at(0), tally)))
        .isEqualTo(used);
    assertThat(MinuteTotalsSerializer.INSTANCE.snapshotConfiguration().restoreSerializer())
        .isSameAs(MinuteTotalsSerializer.INSTANCE);
  }
}
