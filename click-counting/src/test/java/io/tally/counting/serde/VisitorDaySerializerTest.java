package io.tally.counting.serde;

import static io.tally.counting.Clicks.at;
import static io.tally.counting.Clicks.visit;
import static org.assertj.core.api.Assertions.assertThat;

import io.tally.counting.functions.MarkNewVisitors;
import io.tally.counting.records.VisitorDay;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.junit.jupiter.api.Test;

/** Tests for {@link VisitorDaySerializer} and the key it writes. */
class VisitorDaySerializerTest {

  @Test
  void writesTheCodeTheHashsSixteenBytesAndTheDayAndReadsThemBack() throws Exception {
    VisitorDay key = MarkNewVisitors.KEY.getKey(visit("1", "abc123", at(0), "ana"));
    DataOutputSerializer out = new DataOutputSerializer(32);
    VisitorDaySerializer.INSTANCE.serialize(key, out);

    assertThat(out.length()).isEqualTo(1 + 6 + 16 + 4);
    DataInputDeserializer in = new DataInputDeserializer(out.getCopyOfBuffer());
    assertThat(VisitorDaySerializer.INSTANCE.deserialize(in)).isEqualTo(key);
    assertThat(VisitorDaySerializer.INSTANCE.snapshotConfiguration().restoreSerializer())
        .isSameAs(VisitorDaySerializer.INSTANCE);
    assertThat(VisitorDaySerializer.TYPE.isKeyType()).isTrue();
  }

  @Test
  void oneVisitorsDaysOnOneLinkAreApartAndEachDayIsOneKey() throws Exception {
    long dayStart = at(0) - Math.floorMod(at(0), 86_400_000L);

    VisitorDay morning = MarkNewVisitors.KEY.getKey(visit("1", "abc", dayStart, "ana"));
    VisitorDay evening =
        MarkNewVisitors.KEY.getKey(visit("2", "abc", dayStart + 86_399_999L, "ana"));
    VisitorDay nextDay =
        MarkNewVisitors.KEY.getKey(visit("3", "abc", dayStart + 86_400_000L, "ana"));

    assertThat(evening).isEqualTo(morning).hasSameHashCodeAs(morning);
    assertThat(nextDay).isNotEqualTo(morning);
    assertThat(MarkNewVisitors.KEY.getKey(visit("4", "abc", dayStart, "bo"))).isNotEqualTo(morning);
    assertThat(MarkNewVisitors.KEY.getKey(visit("5", "xyz", dayStart, "ana")))
        .isNotEqualTo(morning);
  }

  @Test
  void theKeyHoldsTheHashsBitsAsTheBase64UrlDecoderReadsThem() throws Exception {
    // Marks restored from a savepoint are found only under the keys that wrote them.
    java.util.Random random = new java.util.Random(5);
    for (int i = 0; i < 10_000; i++) {
      byte[] hash = new byte[16];
      random.nextBytes(hash);
      String spelled = java.util.Base64.getUrlEncoder().withoutPadding().encodeToString(hash);
      java.nio.ByteBuffer bits = java.nio.ByteBuffer.wrap(hash);

      VisitorDay key = MarkNewVisitors.KEY.getKey(visit("1", "abc", at(0), spelled));

      assertThat(key.visitorHigh()).isEqualTo(bits.getLong());
      assertThat(key.visitorLow()).isEqualTo(bits.getLong());
    }
  }

  @Test
  void theHashCodeIsFixedByTheFieldsWhateverTheJdk() {
    // Flink places a key by its hash code: the same key must land in the same key group on every
    // TaskManager and after every upgrade, or restored marks are never found again.
    assertThat(new VisitorDay("abc", 1L, -2L, 20_000).hashCode()).isEqualTo(-1424464290);
  }
}
