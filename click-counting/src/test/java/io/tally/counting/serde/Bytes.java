package io.tally.counting.serde;

import java.io.IOException;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;

/** A value through a serializer and back, or its written size: what every serializer test asks. */
final class Bytes {

  private Bytes() {}

  static <T> T roundTrip(TypeSerializer<T> serializer, T value) throws IOException {
    DataOutputSerializer out = new DataOutputSerializer(64);
    serializer.serialize(value, out);
    return serializer.deserialize(new DataInputDeserializer(out.getCopyOfBuffer()));
  }

  static <T> int size(TypeSerializer<T> serializer, T value) throws IOException {
    DataOutputSerializer out = new DataOutputSerializer(64);
    serializer.serialize(value, out);
    return out.length();
  }
}
