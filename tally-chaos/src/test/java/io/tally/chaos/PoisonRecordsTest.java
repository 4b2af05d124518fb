package io.tally.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.event.ClickEventCodec;
import io.tally.event.ClickFields;
import io.tally.event.Decoded;
import io.tally.event.MalformedReason;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** Tests for {@link PoisonRecords}. */
class PoisonRecordsTest {

  private static final long NOW = 1_796_000_000_000L;

  private static List<PoisonRecords.Poison> all() {
    return PoisonRecords.all(NOW - 60_000, NOW);
  }

  private static PoisonRecords.Poison kind(String kind) {
    return all().stream().filter(p -> p.kind().equals(kind)).findFirst().orElseThrow();
  }

  @Test
  void atLeastTwentyKindsCoverEveryMalformedReason() {
    List<PoisonRecords.Poison> poisons = all();

    assertThat(poisons).hasSizeGreaterThanOrEqualTo(20);
    assertThat(poisons).extracting(PoisonRecords.Poison::kind).doesNotHaveDuplicates();
    assertThat(poisons)
        .extracting(PoisonRecords.Poison::reason)
        .filteredOn(Objects::nonNull)
        .containsAll(Arrays.asList(MalformedReason.values()));
  }

  @Test
  void eachKindIsRefusedByTheCodecForTheReasonTheScenarioExpects() {
    for (PoisonRecords.Poison p : all()) {
      if (p.isCounted()) {
        continue;
      }
      Decoded decoded = ClickEventCodec.decode(p.value(), NOW);

      assertThat(decoded).as(p.kind()).isInstanceOf(Decoded.Malformed.class);
      assertThat(((Decoded.Malformed) decoded).reason()).as(p.kind()).isEqualTo(p.reason());
    }
  }

  @Test
  void eachKindOutOfItsBoundIsRefusedNamingTheField() {
    List<PoisonRecords.Poison> outOfBound =
        all().stream().filter(p -> p.reason() == MalformedReason.FIELD_VALUE).toList();

    // NUL and a lone surrogate in each of seven string fields, and each bound one past.
    assertThat(outOfBound).hasSizeGreaterThanOrEqualTo(20);
    for (PoisonRecords.Poison p : outOfBound) {
      String detail = ((Decoded.Malformed) ClickEventCodec.decode(p.value(), NOW)).detail();

      assertThat(detail)
          .as(p.kind())
          .matches("(visitor|ip_hash|ua|referrer_domain|country|ua_family|device) .*");
    }
  }

  @Test
  void eachKindAtABoundDecodesToTheClickTheScenarioCounts() {
    List<PoisonRecords.Poison> counted = all().stream().filter(p -> p.isCounted()).toList();

    assertThat(counted).hasSizeGreaterThanOrEqualTo(5);
    assertThat(counted).extracting(p -> p.counted().code()).doesNotHaveDuplicates();
    assertThat(counted).extracting(p -> p.counted().clickId()).doesNotHaveDuplicates();
    for (PoisonRecords.Poison p : counted) {
      Decoded decoded = ClickEventCodec.decode(p.value(), NOW);

      assertThat(decoded).as(p.kind()).isEqualTo(new Decoded.Valid(p.counted()));
    }
  }

  @Test
  void theRecordsAtTheSizeLimitAreExactlyAsLargeAsARecordMayBe() {
    PoisonRecords.Poison plain = kind("record of exactly 4096 bytes");
    PoisonRecords.Poison wide = kind("record of exactly 4096 bytes padded with 4-byte characters");

    assertThat(plain.value()).hasSize(ClickEventCodec.MAX_EVENT_BYTES);
    assertThat(wide.value()).hasSize(ClickEventCodec.MAX_EVENT_BYTES);
    assertThat(new String(wide.value(), StandardCharsets.UTF_8).length())
        .isLessThan(ClickEventCodec.MAX_EVENT_BYTES * 2 / 3);
    assertThat(kind("just over the size limit").value())
        .hasSize(ClickEventCodec.MAX_EVENT_BYTES + 1);
  }

  @Test
  void theUserAgentsEndInAWholeFourByteCharacterAtAndPastTheBound() {
    for (int length : new int[] {ClickFields.MAX_USER_AGENT, ClickFields.MAX_USER_AGENT + 1}) {
      String ua = PoisonRecords.userAgent(length);

      assertThat(ua).hasSize(length);
      assertThat(ua).endsWith(PoisonRecords.FOUR_BYTES);
    }
    assertThat(kind("user agent of 512 characters, 4-byte ones at its end").counted().userAgent())
        .hasSize(ClickFields.MAX_USER_AGENT);
  }

  @Test
  void hostNamesHaveTheLengthAndLabelsAskedFor() {
    SplittableRandom random = new SplittableRandom(1);
    String atBound =
        PoisonRecords.hostName(ClickFields.MAX_HOST_NAME, ClickFields.MAX_LABEL, random);
    String pastBound =
        PoisonRecords.hostName(ClickFields.MAX_HOST_NAME + 1, ClickFields.MAX_LABEL, random);
    String attack = PoisonRecords.hostName(3_000, 60, random);

    assertThat(atBound).hasSize(ClickFields.MAX_HOST_NAME);
    assertThat(ClickFields.isHostName(atBound)).isTrue();
    assertThat(atBound.split("\\.")[0]).hasSize(ClickFields.MAX_LABEL);
    assertThat(pastBound).hasSize(ClickFields.MAX_HOST_NAME + 1);
    assertThat(Arrays.stream(pastBound.split("\\."))).allMatch(l -> l.length() <= 63);
    assertThat(attack).hasSize(3_000);
    assertThat(Arrays.stream(attack.split("\\."))).allMatch(l -> !l.isEmpty() && l.length() <= 60);
    // One short of room for another label and its dot: the label before is cut, none is empty.
    assertThat(PoisonRecords.hostName(65, 63, random).split("\\.")).hasSize(2);
  }

  @Test
  void theOneMegabyteRecordIsOneMegabyte() {
    assertThat(PoisonRecords.all(NOW, NOW))
        .filteredOn(p -> p.kind().equals("1 MB record"))
        .singleElement()
        .satisfies(p -> assertThat(p.value()).hasSize(PoisonRecords.ONE_MB));
  }
}
