package io.tally.counting.serde;

import io.tally.counting.periods.ClickTally;
import io.tally.counting.periods.LinkPeriods;
import io.tally.event.VisitorSketches;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import org.apache.datasketches.cpc.CpcSketch;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeutils.SimpleTypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.base.TypeSerializerSingleton;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.core.memory.DataOutputView;

/**
 * A link's open periods ({@link LinkPeriods}) in keyed state: each period's totals, a day's visitor
 * sketch as DataSketches serializes it (HIP estimate and all) with the number of visitors in it
 * and, when its rows changed since they were last written, what was last written of them. Part of
 * the state layout: a change to the format needs a new serializer snapshot and a migration, or a
 * new uid for the counting operator.
 */
public final class LinkPeriodsSerializer extends TypeSerializerSingleton<LinkPeriods> {

  public static final LinkPeriodsSerializer INSTANCE = new LinkPeriodsSerializer();

  public static final TypeInformation<LinkPeriods> TYPE =
      new SerializerType<>(LinkPeriods.class, INSTANCE, false);

  /**
   * A period's flags, one byte: states written before the recount flags came wrote a boolean for
   * {@link #CHANGED} in it.
   */
  private static final int CHANGED = 1;

  private static final int RECOUNT_PENDING = 2;
  private static final int RECOUNTED_IN_PART = 4;

  private LinkPeriodsSerializer() {}

  @Override
  public boolean isImmutableType() {
    return false;
  }

  @Override
  public LinkPeriods createInstance() {
    return new LinkPeriods();
  }

  @Override
  public LinkPeriods copy(LinkPeriods from) {
    try {
      DataOutputSerializer out = new DataOutputSerializer(256);
      serialize(from, out);
      return deserialize(new DataInputDeserializer(out.getSharedBuffer(), 0, out.length()));
    } catch (IOException e) {
      throw new IllegalStateException("cannot copy " + from, e);
    }
  }

  @Override
  public LinkPeriods copy(LinkPeriods from, LinkPeriods reuse) {
    return copy(from);
  }

  @Override
  public int getLength() {
    return -1;
  }

  @Override
  public void serialize(LinkPeriods link, DataOutputView out) throws IOException {
    writePeriods(link.minutes(), out);
    writePeriods(link.hours(), out);
    writePeriods(link.days(), out);
  }

  @Override
  public LinkPeriods deserialize(DataInputView in) throws IOException {
    return LinkPeriods.of(readPeriods(in), readPeriods(in), readPeriods(in));
  }

  @Override
  public LinkPeriods deserialize(LinkPeriods reuse, DataInputView in) throws IOException {
    return deserialize(in);
  }

  @Override
  public void copy(DataInputView in, DataOutputView out) throws IOException {
    serialize(deserialize(in), out);
  }

  @Override
  public TypeSerializerSnapshot<LinkPeriods> snapshotConfiguration() {
    return new Snapshot();
  }

  private static void writePeriods(Collection<LinkPeriods.Period> periods, DataOutputView out)
      throws IOException {
    out.writeInt(periods.size());
    for (LinkPeriods.Period period : periods) {
      out.writeLong(period.start());
      out.writeLong(period.end());
      TallyFormat.writeCounts(period.total(), out);
      CpcSketch sketch = period.visitorSketch();
      byte[] sketchBytes = sketch == null ? new byte[0] : sketch.toByteArray();
      out.writeInt(sketchBytes.length);
      out.write(sketchBytes);
      out.writeLong(period.sketchedVisitors());
      out.writeByte(
          (period.changed() ? CHANGED : 0)
              | (period.recountPending() ? RECOUNT_PENDING : 0)
              | (period.recountedInPart() ? RECOUNTED_IN_PART : 0));
      if (period.changed()) {
        out.writeLong(period.changedIn());
        long[] written = period.writtenCounts();
        out.writeInt(written == null ? -1 : written.length);
        for (int i = 0; written != null && i < written.length; i++) {
          out.writeLong(written[i]);
        }
      }
    }
  }

  private static List<LinkPeriods.Period> readPeriods(DataInputView in) throws IOException {
    int n = in.readInt();
    List<LinkPeriods.Period> periods = new ArrayList<>(n);
    for (; n > 0; n--) {
      long start = in.readLong();
      long end = in.readLong();
      ClickTally t = TallyFormat.readCounts(in);
      byte[] sketchBytes = new byte[in.readInt()];
      in.readFully(sketchBytes);
      CpcSketch sketch = sketchBytes.length == 0 ? null : VisitorSketches.fromBytes(sketchBytes);
      long sketched = in.readLong();
      byte flags = in.readByte();
      boolean pending = (flags & RECOUNT_PENDING) != 0;
      boolean inPart = (flags & RECOUNTED_IN_PART) != 0;
      if ((flags & CHANGED) == 0) {
        periods.add(
            LinkPeriods.Period.written(start, end, t)
                .restoreVisitors(sketch, sketched)
                .restoreRecount(pending, inPart));
        continue;
      }
      long changedIn = in.readLong();
      int written = in.readInt();
      long[] writtenCounts = written < 0 ? null : new long[written];
      for (int i = 0; i < written; i++) {
        writtenCounts[i] = in.readLong();
      }
      periods.add(
          LinkPeriods.Period.unwritten(start, end, t, changedIn, writtenCounts)
              .restoreVisitors(sketch, sketched)
              .restoreRecount(pending, inPart));
    }
    return periods;
  }

  /**
   * Restores the one serializer; Flink needs a snapshot class with a public no-argument
   * constructor.
   */
  public static final class Snapshot extends SimpleTypeSerializerSnapshot<LinkPeriods> {
    public Snapshot() {
      super(() -> INSTANCE);
    }
  }
}
