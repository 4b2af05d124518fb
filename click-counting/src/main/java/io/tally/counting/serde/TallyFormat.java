package io.tally.counting.serde;

import io.tally.counting.periods.ClickTally;
import java.io.IOException;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * A tally's counts as the serializers write them: the four totals, then each slot in use as its
 * dimension's byte, its value and its count. Slots beyond {@link ClickTally#size} are not written.
 * Part of the counting state's layout ({@link LinkPeriodsSerializer}).
 */
final class TallyFormat {

  private TallyFormat() {}

  static void writeCounts(ClickTally t, DataOutputView out) throws IOException {
    out.writeLong(t.clicks);
    out.writeLong(t.botClicks);
    out.writeLong(t.hourVisitors);
    out.writeLong(t.dayVisitors);
    out.writeInt(t.size);
    for (int i = 0; i < t.size; i++) {
      out.writeByte(t.dimensions[i]);
      ClickSerializer.writeString(t.values[i], out);
      out.writeLong(t.counts[i]);
    }
  }

  /** A new tally holding the counts {@link #writeCounts} wrote. */
  static ClickTally readCounts(DataInputView in) throws IOException {
    ClickTally t = new ClickTally();
    t.clicks = in.readLong();
    t.botClicks = in.readLong();
    t.hourVisitors = in.readLong();
    t.dayVisitors = in.readLong();
    t.size = in.readInt();
    t.dimensions = new byte[t.size];
    t.values = new String[t.size];
    t.counts = new long[t.size];
    for (int i = 0; i < t.size; i++) {
      t.dimensions[i] = in.readByte();
      t.values[i] = ClickSerializer.readString(in);
      t.counts[i] = in.readLong();
    }
    return t;
  }
}
