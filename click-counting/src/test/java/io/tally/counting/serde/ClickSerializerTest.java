package io.tally.counting.serde;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.tally.counting.classify.UserAgentFacts;
import io.tally.counting.records.Click;
import io.tally.event.ClickEvent;
import java.io.IOException;
import java.util.UUID;
import org.apache.flink.api.common.serialization.SerializerConfigImpl;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.junit.jupiter.api.Test;

/** Tests for {@link ClickSerializer}. */
class ClickSerializerTest {

  private static final Click HUMAN =
      new Click(
          UUID.fromString("0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"),
          "abc",
          1_764_000_000_123L,
          "",
          "Zm9vYmFy",
          -0x1234_5678_9abc_def0L,
          "DE",
          "news.example.org",
          "Chrome",
          "Windows",
          "desktop",
          true,
          false);
  private static final Click BOT =
      new Click(
          new UUID(-1L, 7L),
          "xyz",
          -5L,
          "crawler",
          "",
          ClickEvent.NO_RANGE_VISITOR,
          "unknown",
          "",
          "Other",
          "Other",
          "bot",
          false,
          true);

  @Test
  void writesAndReadsBackEveryField() throws IOException {
    assertThat(roundTrip(HUMAN)).isEqualTo(HUMAN);
    assertThat(roundTrip(BOT)).isEqualTo(BOT);
  }

  @Test
  void writesCampaignTagsOnlyForATaggedClick() throws IOException {
    Click tagged =
        new Click(
            HUMAN.clickId(),
            HUMAN.code(),
            HUMAN.ts(),
            HUMAN.botKind(),
            HUMAN.visitor(),
            HUMAN.rangeVisitor(),
            HUMAN.country(),
            HUMAN.referrer(),
            HUMAN.browser(),
            HUMAN.os(),
            HUMAN.device(),
            true,
            false,
            "newsletter",
            "",
            "spring sale \u00e9");

    assertThat(roundTrip(tagged)).isEqualTo(tagged);
    assertThat(size(tagged) - size(HUMAN))
        .as("each tag a length and its bytes; an untagged click none")
        .isEqualTo(1 + "newsletter".length() + 1 + 1 + "spring sale \u00e9".getBytes(UTF_8).length);
  }

  @Test
  void keepsNonAsciiTextLongTextAndNulls() throws IOException {
    String longReferrer = "a".repeat(300) + ".example";
    Click odd =
        new Click(
            new UUID(0L, 0L),
            "code",
            0L,
            "",
            null,
            ClickEvent.NO_RANGE_VISITOR,
            "unknown",
            longReferrer,
            "Firefox",
            "Linux",
            "phone",
            false,
            false);

    assertThat(roundTrip(odd)).isEqualTo(odd);
  }

  @Test
  void writesAFixedVocabularysValueAsOneByteAndReadsBackTheSameInstance() throws IOException {
    Click withKnownValues = roundTrip(HUMAN);
    Click withUnknownValues =
        new Click(
            HUMAN.clickId(),
            HUMAN.code(),
            HUMAN.ts(),
            "",
            HUMAN.visitor(),
            ClickEvent.NO_RANGE_VISITOR,
            "ZZ",
            HUMAN.referrer(),
            "Netscape Navigator",
            "Windows",
            "desktop",
            true,
            false);

    assertThat(withKnownValues.browser()).isSameAs(UserAgentFacts.BROWSERS.get(0));
    assertThat(withKnownValues.country()).isSameAs(roundTrip(HUMAN).country());
    assertThat(size(withUnknownValues) - size(HUMAN))
        .as("an unlisted browser and country are written in full")
        .isEqualTo("Netscape Navigator".length() + 1 + "ZZ".length() + 1);
    assertThat(roundTrip(withUnknownValues)).isEqualTo(withUnknownValues);
  }

  @Test
  void aCountrysByteIsItsPlaceInAListFixedInCodeNotTheJdks() {
    assertThat(Countries.CODES)
        .hasSize(249)
        .doesNotHaveDuplicates()
        .allMatch(code -> code.matches("[A-Z]{2}"));
    // Pinned: a TaskManager on any JDK reads the same byte back as the same country.
    assertThat(Countries.CODES.indexOf("AD")).isZero();
    assertThat(Countries.CODES.indexOf("DE")).isEqualTo(56);
    assertThat(Countries.CODES.indexOf("US")).isEqualTo(232);
    assertThat(Countries.CODES.get(248)).isEqualTo("ZW");
  }

  @Test
  void readsRecordsBackToBackAndCopiesThemBetweenViews() throws IOException {
    DataOutputSerializer out = new DataOutputSerializer(64);
    ClickSerializer.INSTANCE.serialize(HUMAN, out);
    ClickSerializer.INSTANCE.serialize(BOT, out);
    DataOutputSerializer copied = new DataOutputSerializer(64);
    DataInputDeserializer in = new DataInputDeserializer(out.getCopyOfBuffer());
    ClickSerializer.INSTANCE.copy(in, copied);
    ClickSerializer.INSTANCE.copy(in, copied);

    DataInputDeserializer back = new DataInputDeserializer(copied.getCopyOfBuffer());
    assertThat(ClickSerializer.INSTANCE.deserialize(back)).isEqualTo(HUMAN);
    assertThat(ClickSerializer.INSTANCE.deserialize(back)).isEqualTo(BOT);
    assertThat(back.available()).isZero();
  }

  @Test
  void theTypeHandsOutThisSerializer() {
    assertThat(ClickSerializer.TYPE.createSerializer(new SerializerConfigImpl()))
        .isSameAs(ClickSerializer.INSTANCE);
    assertThat(ClickSerializer.INSTANCE.snapshotConfiguration().restoreSerializer())
        .isSameAs(ClickSerializer.INSTANCE);
  }

  private static int size(Click click) throws IOException {
    return Bytes.size(ClickSerializer.INSTANCE, click);
  }

  private static Click roundTrip(Click click) throws IOException {
    return Bytes.roundTrip(ClickSerializer.INSTANCE, click);
  }
}
