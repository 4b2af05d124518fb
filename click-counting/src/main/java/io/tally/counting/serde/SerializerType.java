package io.tally.counting.serde;

import java.util.Objects;
import org.apache.flink.api.common.serialization.SerializerConfig;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeutils.TypeSerializer;

/**
 * A type that Flink serializes with one serializer of ours, written for a record on the hot path,
 * instead of the reflective record serializer (or Kryo) that type extraction would pick.
 *
 * @param <T> the type
 */
public final class SerializerType<T> extends TypeInformation<T> {

  private final Class<T> type;
  private final TypeSerializer<T> serializer;
  private final boolean key;

  /**
   * @param key whether streams may be keyed by this type: its {@code equals} and {@code hashCode}
   *     must then depend on the value only, as Flink places keys by their hash code
   */
  public SerializerType(Class<T> type, TypeSerializer<T> serializer, boolean key) {
    this.type = type;
    this.serializer = serializer;
    this.key = key;
  }

  @Override
  public boolean isBasicType() {
    return false;
  }

  @Override
  public boolean isTupleType() {
    return false;
  }

  @Override
  public int getArity() {
    return 1;
  }

  @Override
  public int getTotalFields() {
    return 1;
  }

  @Override
  public Class<T> getTypeClass() {
    return type;
  }

  @Override
  public boolean isKeyType() {
    return key;
  }

  @Override
  public TypeSerializer<T> createSerializer(SerializerConfig config) {
    return serializer;
  }

  @Override
  public String toString() {
    return type.getSimpleName() + "(" + serializer.getClass().getSimpleName() + ")";
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof SerializerType<?> other
        && other.type == type
        && other.serializer.equals(serializer);
  }

  @Override
  public int hashCode() {
    return Objects.hash(type, serializer);
  }

  @Override
  public boolean canEqual(Object o) {
    return o instanceof SerializerType;
  }
}
