package io.tally.counting.serde;

import java.io.IOException;
import org.apache.flink.api.common.typeutils.base.TypeSerializerSingleton;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * A serializer of ours for an immutable type: a value is its own copy, and deserializing never
 * reuses an instance. Subclasses say how a value is written and read.
 *
 * @param <T> the type
 */
abstract class ImmutableSerializer<T> extends TypeSerializerSingleton<T> {

  @Override
  public final boolean isImmutableType() {
    return true;
  }

  @Override
  public final T copy(T from) {
    return from;
  }

  @Override
  public final T copy(T from, T reuse) {
    return from;
  }

  @Override
  public final T deserialize(T reuse, DataInputView in) throws IOException {
    return deserialize(in);
  }

  @Override
  public void copy(DataInputView in, DataOutputView out) throws IOException {
    serialize(deserialize(in), out);
  }
}
