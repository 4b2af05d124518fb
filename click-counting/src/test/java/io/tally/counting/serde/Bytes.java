package io.tally.counting.serde;

import java.io.IOException;
import java.io.UncheckedIOException;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;

/** A value through a serializer and back, or its written bytes: what every serializer test asks. */
final class Bytes {

  private Bytes() {}

  static <T> T roundTrip(TypeSerializer<T> serializer, T value) throws IOException {
    return serializer.deserialize(new DataInputDeserializer(written(serializer, value)));
  }

  static <T> int size(TypeSerializer<T> serializer, T value) {
    return written(serializer, value).length;
  }

  /** The bytes {@code serializer} writes for {@code value}. */
  static <T> byte[] written(TypeSerializer<T> serializer, T value) {
    DataOutputSerializer out = new DataOutputSerializer(64);
    try {
      serializer.serialize(value, out);
    } catch (IOException e) {
      throw new UncheckedIOException("writing to memory", e);
    }
    return out.getCopyOfBuffer();
  }
}
