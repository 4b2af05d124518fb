package io.tally.counting.serde;

import io.tally.counting.periods.ClickTally;
import io.tally.counting.periods.MinuteTotals;
import java.io.IOException;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeutils.SimpleTypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * Writes a subtask's partial minute ({@link MinuteTotals}) as its code, its minute, the slots of
 * its tally in use ({@link TallyFormat}) and its new visitors' keys, strings as bulk UTF-8 copies.
 * Flink's own serializer of the record wrote every string a character at a time and the tally's
 * arrays whole, empty slots included, and a partial crosses the network about once per click or two
 * of a quiet link. A partial is not changed once it is sent, so a value is its own copy. Used only
 * between operators ({@link #TYPE}); no state holds a partial, so the format has no versions to
 * keep.
 */
public final class MinuteTotalsSerializer extends ImmutableSerializer<MinuteTotals> {

  public static final MinuteTotalsSerializer INSTANCE = new MinuteTotalsSerializer();

  /** The type to give a stream of partials so that Flink serializes them with {@link #INSTANCE}. */
  public static final TypeInformation<MinuteTotals> TYPE =
      new SerializerType<>(MinuteTotals.class, INSTANCE, false);

  private MinuteTotalsSerializer() {}

  @Override
  public MinuteTotals createInstance() {
    return new MinuteTotals("", 0, new ClickTally());
  }

  @Override
  public int getLength() {
    return -1;
  }

  @Override
  public void serialize(MinuteTotals partial, DataOutputView out) throws IOException {
    ClickSerializer.writeString(partial.code(), out);
    out.writeLong(partial.minuteStart());
    ClickTally t = partial.tally();
    TallyFormat.writeCounts(t, out);
    out.writeInt(t.dayVisitorKeyCount);
    for (int i = 0; i < t.dayVisitorKeyCount; i++) {
      out.writeLong(t.dayVisitorKeys[i]);
    }
  }

  @Override
  public MinuteTotals deserialize(DataInputView in) throws IOException {
    String code = ClickSerializer.readString(in);
    long minuteStart = in.readLong();
    ClickTally t = TallyFormat.readCounts(in);
    t.dayVisitorKeyCount = in.readInt();
    t.dayVisitorKeys = new long[t.dayVisitorKeyCount];
    for (int i = 0; i < t.dayVisitorKeyCount; i++) {
      t.dayVisitorKeys[i] = in.readLong();
    }
    return new MinuteTotals(code, minuteStart, t);
  }

  @Override
  public TypeSerializerSnapshot<MinuteTotals> snapshotConfiguration() {
    return new Snapshot();
  }

  /**
   * Restores the one serializer; Flink needs a snapshot class with a public no-argument
   * constructor.
   */
  public static final class Snapshot extends SimpleTypeSerializerSnapshot<MinuteTotals> {
    public Snapshot() {
      super(() -> INSTANCE);
    }
  }
}
