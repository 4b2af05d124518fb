package io.tally.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.event.ClickEventCodec;
import io.tally.event.Decoded;
import io.tally.event.MalformedReason;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Tests for {@link PoisonRecords}. */
class PoisonRecordsTest {

  private static final long NOW = 1_796_000_000_000L;

  @Test
  void atLeastTwentyKindsCoverEveryMalformedReason() {
    List<PoisonRecords.Poison> poisons = PoisonRecords.all(NOW - 60_000, NOW);

    assertThat(poisons).hasSizeGreaterThanOrEqualTo(20);
    assertThat(poisons).extracting(PoisonRecords.Poison::kind).doesNotHaveDuplicates();
    assertThat(poisons)
        .extracting(PoisonRecords.Poison::reason)
        .containsAll(Arrays.asList(MalformedReason.values()));
  }

  @Test
  void eachKindIsRefusedByTheCodecForTheReasonTheScenarioExpects() {
    for (PoisonRecords.Poison p : PoisonRecords.all(NOW - 60_000, NOW)) {
      Decoded decoded = ClickEventCodec.decode(p.value(), NOW);

      assertThat(decoded).as(p.kind()).isInstanceOf(Decoded.Malformed.class);
      assertThat(((Decoded.Malformed) decoded).reason()).as(p.kind()).isEqualTo(p.reason());
    }
  }

  @Test
  void theOneMegabyteRecordIsOneMegabyte() {
    assertThat(PoisonRecords.all(NOW, NOW))
        .filteredOn(p -> p.kind().equals("1 MB record"))
        .singleElement()
        .satisfies(p -> assertThat(p.value()).hasSize(PoisonRecords.ONE_MB));
  }
}
