package io.tally.counting.serde;

import io.tally.counting.records.RecountKey;
import java.io.IOException;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeutils.SimpleTypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;
import org.apache.flink.types.StringValue;

/**
 * A recount's key in the byte order its sort needs. BATCH mode sorts a keyed input by the key's
 * serialized bytes, compared as signed bytes. The code comes first, its length before its
 * characters, so that no link's code is a prefix of another's bytes and each link's keys sort
 * together; then whether the click is a person's, the visitor hash and the day, so that a visitor's
 * day does too; then the time, written so that the byte order is the order of time, and the id, so
 * that only a click's copies have equal bytes. Never part of a checkpoint: BATCH mode takes none.
 */
public final class RecountKeySerializer extends ImmutableSerializer<RecountKey> {

  public static final RecountKeySerializer INSTANCE = new RecountKeySerializer();

  /** The key type of a recount keyed by {@link RecountKey}. */
  public static final TypeInformation<RecountKey> TYPE =
      new SerializerType<>(RecountKey.class, INSTANCE, true);

  /**
   * Flips the sign bit of every byte of a time but the first: compared as signed bytes, the first
   * byte then orders as a long's sign and high bits do, and each later byte as the unsigned byte it
   * is in the long.
   */
  private static final long TIME_ORDER = 0x0080_8080_8080_8080L;

  private RecountKeySerializer() {}

  @Override
  public RecountKey createInstance() {
    return new RecountKey("", false, 0, 0, 0, 0, 0, 0);
  }

  @Override
  public int getLength() {
    return -1;
  }

  @Override
  public void serialize(RecountKey key, DataOutputView out) throws IOException {
    StringValue.writeString(key.code(), out);
    out.writeBoolean(key.person());
    out.writeLong(key.visitorHigh());
    out.writeLong(key.visitorLow());
    out.writeInt(key.day());
    out.writeLong(key.ts() ^ TIME_ORDER);
    out.writeLong(key.idHigh());
    out.writeLong(key.idLow());
  }

  @Override
  public RecountKey deserialize(DataInputView in) throws IOException {
    return new RecountKey(
        StringValue.readString(in),
        in.readBoolean(),
        in.readLong(),
        in.readLong(),
        in.readInt(),
        in.readLong() ^ TIME_ORDER,
        in.readLong(),
        in.readLong());
  }

  @Override
  public TypeSerializerSnapshot<RecountKey> snapshotConfiguration() {
    return new Snapshot();
  }

  /**
   * Restores the one serializer; Flink needs a snapshot class with a public no-argument
   * constructor.
   */
  public static final class Snapshot extends SimpleTypeSerializerSnapshot<RecountKey> {
    public Snapshot() {
      super(() -> INSTANCE);
    }
  }
}
