package io.tally.counting.serde;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.util.UUID;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.junit.jupiter.api.Test;

/** Tests for {@link ClickIdSerializer}. */
class ClickIdSerializerTest {

  @Test
  void writesAClickIdAsItsSixteenBytesAndReadsItBack() throws IOException {
    UUID id = UUID.fromString("019ace00-1234-7abc-8def-0123456789ab");
    DataOutputSerializer out = new DataOutputSerializer(16);
    ClickIdSerializer.INSTANCE.serialize(id, out);

    assertThat(out.length()).isEqualTo(16).isEqualTo(ClickIdSerializer.INSTANCE.getLength());
    assertThat(
            ClickIdSerializer.INSTANCE.deserialize(
                new DataInputDeserializer(out.getCopyOfBuffer())))
        .isEqualTo(id);
  }

  @Test
  void copiesBetweenViewsAndRestoresFromItsSnapshot() throws IOException {
    DataOutputSerializer out = new DataOutputSerializer(32);
    ClickIdSerializer.INSTANCE.serialize(new UUID(1, 2), out);
    ClickIdSerializer.INSTANCE.serialize(new UUID(-3, 4), out);
    DataInputDeserializer in = new DataInputDeserializer(out.getCopyOfBuffer());
    DataOutputSerializer copied = new DataOutputSerializer(32);
    ClickIdSerializer.INSTANCE.copy(in, copied);
    ClickIdSerializer.INSTANCE.copy(in, copied);

    DataInputDeserializer back = new DataInputDeserializer(copied.getCopyOfBuffer());
    assertThat(ClickIdSerializer.INSTANCE.deserialize(back)).isEqualTo(new UUID(1, 2));
    assertThat(ClickIdSerializer.INSTANCE.deserialize(back)).isEqualTo(new UUID(-3, 4));
    assertThat(ClickIdSerializer.INSTANCE.snapshotConfiguration().restoreSerializer())
        .isSameAs(ClickIdSerializer.INSTANCE);
    assertThat(ClickIdSerializer.TYPE.isKeyType()).isTrue();
  }
}
