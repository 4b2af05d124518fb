package io.tally.counting.serde;

import io.tally.counting.records.VisitorClick;
import java.io.IOException;
import java.util.UUID;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeutils.SimpleTypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * A visitor's click as its visitor day ({@link VisitorDaySerializer}) and the click id's 16 bytes.
 * Part of the state layout: a change to the format needs a new serializer snapshot and a migration,
 * or a new uid for the dedup per visitor.
 */
public final class VisitorClickSerializer extends ImmutableSerializer<VisitorClick> {

  public static final VisitorClickSerializer INSTANCE = new VisitorClickSerializer();

  /** The key type of a stream keyed by a visitor's click. */
  public static final TypeInformation<VisitorClick> TYPE =
      new SerializerType<>(VisitorClick.class, INSTANCE, true);

  private VisitorClickSerializer() {}

  @Override
  public VisitorClick createInstance() {
    return new VisitorClick(VisitorDaySerializer.INSTANCE.createInstance(), new UUID(0, 0));
  }

  @Override
  public int getLength() {
    return -1;
  }

  @Override
  public void serialize(VisitorClick key, DataOutputView out) throws IOException {
    VisitorDaySerializer.INSTANCE.serialize(key.visitorDay(), out);
    ClickIdSerializer.INSTANCE.serialize(key.clickId(), out);
  }

  @Override
  public VisitorClick deserialize(DataInputView in) throws IOException {
    return new VisitorClick(
        VisitorDaySerializer.INSTANCE.deserialize(in), ClickIdSerializer.INSTANCE.deserialize(in));
  }

  @Override
  public TypeSerializerSnapshot<VisitorClick> snapshotConfiguration() {
    return new Snapshot();
  }

  /**
   * Restores the one serializer; Flink needs a snapshot class with a public no-argument
   * constructor.
   */
  public static final class Snapshot extends SimpleTypeSerializerSnapshot<VisitorClick> {
    public Snapshot() {
      super(() -> INSTANCE);
    }
  }
}
