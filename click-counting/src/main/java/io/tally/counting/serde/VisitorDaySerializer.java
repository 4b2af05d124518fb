package io.tally.counting.serde;

import io.tally.counting.records.VisitorDay;
import java.io.IOException;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeutils.SimpleTypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;
import org.apache.flink.types.StringValue;

/**
 * A visitor's day on a link as the code (a length byte and its characters, as Flink writes
 * strings), the visitor hash's 16 bytes and the day's 4: the key of every visitor mark, where a
 * string key with a map of days took a dozen bytes more per entry. Part of the state layout: a
 * change to the format needs a new serializer snapshot and a migration, or a new uid for the marks.
 */
public final class VisitorDaySerializer extends ImmutableSerializer<VisitorDay> {

  public static final VisitorDaySerializer INSTANCE = new VisitorDaySerializer();

  /** The key type of a stream keyed by visitor day. */
  public static final TypeInformation<VisitorDay> TYPE =
      new SerializerType<>(VisitorDay.class, INSTANCE, true);

  private VisitorDaySerializer() {}

  @Override
  public VisitorDay createInstance() {
    return new VisitorDay("", 0, 0, 0);
  }

  @Override
  public int getLength() {
    return -1;
  }

  @Override
  public void serialize(VisitorDay key, DataOutputView out) throws IOException {
    StringValue.writeString(key.code(), out);
    out.writeLong(key.visitorHigh());
    out.writeLong(key.visitorLow());
    out.writeInt(key.day());
  }

  @Override
  public VisitorDay deserialize(DataInputView in) throws IOException {
    return new VisitorDay(StringValue.readString(in), in.readLong(), in.readLong(), in.readInt());
  }

  @Override
  public TypeSerializerSnapshot<VisitorDay> snapshotConfiguration() {
    return new Snapshot();
  }

  /**
   * Restores the one serializer; Flink needs a snapshot class with a public no-argument
   * constructor.
   */
  public static final class Snapshot extends SimpleTypeSerializerSnapshot<VisitorDay> {
    public Snapshot() {
      super(() -> INSTANCE);
    }
  }
}
