package io.tally.counting.serde;

import java.io.IOException;
import java.util.UUID;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeutils.SimpleTypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * A click id as its 16 bytes. It is the key of the dedup state, where one entry per remembered
 * click is most of the job's state: as text it took 36 bytes and then some. Part of the state
 * layout: a change to the format needs a new serializer snapshot and a migration, or a new uid for
 * the dedup operator.
 */
public final class ClickIdSerializer extends ImmutableSerializer<UUID> {

  public static final ClickIdSerializer INSTANCE = new ClickIdSerializer();

  /** The key type of a stream keyed by click id. */
  public static final TypeInformation<UUID> TYPE = new SerializerType<>(UUID.class, INSTANCE, true);

  private ClickIdSerializer() {}

  @Override
  public UUID createInstance() {
    return new UUID(0, 0);
  }

  @Override
  public int getLength() {
    return 16;
  }

  @Override
  public void serialize(UUID id, DataOutputView out) throws IOException {
    out.writeLong(id.getMostSignificantBits());
    out.writeLong(id.getLeastSignificantBits());
  }

  @Override
  public UUID deserialize(DataInputView in) throws IOException {
    return new UUID(in.readLong(), in.readLong());
  }

  @Override
  public void copy(DataInputView in, DataOutputView out) throws IOException {
    out.write(in, 16);
  }

  @Override
  public TypeSerializerSnapshot<UUID> snapshotConfiguration() {
    return new Snapshot();
  }

  /**
   * Restores the one serializer; Flink needs a snapshot class with a public no-argument
   * constructor.
   */
  public static final class Snapshot extends SimpleTypeSerializerSnapshot<UUID> {
    public Snapshot() {
      super(() -> INSTANCE);
    }
  }
}
