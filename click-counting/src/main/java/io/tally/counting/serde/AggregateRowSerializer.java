package io.tally.counting.serde;

import io.tally.counting.records.AggregateRow;
import io.tally.counting.records.DimensionCount;
import io.tally.counting.records.KeptValues;
import io.tally.counting.records.MinuteCount;
import io.tally.counting.records.PeriodTotals;
import java.io.IOException;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeutils.SimpleTypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * Writes a row for the aggregate tables ({@link AggregateRow}) as a byte naming its one table, then
 * that row's fields, strings as bulk UTF-8 copies. Flink's own serializer of the record wrote a
 * null flag for each of the six tables a row is not for, and every string a character at a time;
 * every counted click sends a few rows to the writer. Used only between operators ({@link #TYPE});
 * no state holds a row, so the format has no versions to keep.
 */
public final class AggregateRowSerializer extends ImmutableSerializer<AggregateRow> {

  public static final AggregateRowSerializer INSTANCE = new AggregateRowSerializer();

  /** The type to give a stream of rows so that Flink serializes them with {@link #INSTANCE}. */
  public static final TypeInformation<AggregateRow> TYPE =
      new SerializerType<>(AggregateRow.class, INSTANCE, false);

  private static final byte MINUTE = 0;
  private static final byte HOUR = 1;
  private static final byte DAY = 2;
  private static final byte DIMENSION = 3;
  private static final byte DAY_DIMENSION = 4;
  private static final byte HOUR_KEPT = 5;
  private static final byte DAY_KEPT = 6;
  private static final byte END_OF_ROUND = 7;

  /** Added to a minute's, an hour's or a day's byte when the row replaces the stored one. */
  private static final byte REPLACING = 16;

  /** A period's sketch length when it has none. */
  private static final int NO_SKETCH = -1;

  /** A day's sketch length when its stored sketch stays ({@link PeriodTotals#sketchKept}). */
  private static final int SKETCH_KEPT = -2;

  private AggregateRowSerializer() {}

  @Override
  public AggregateRow createInstance() {
    return AggregateRow.of(new MinuteCount("", 0, 0, 0));
  }

  @Override
  public int getLength() {
    return -1;
  }

  @Override
  public void serialize(AggregateRow row, DataOutputView out) throws IOException {
    if (row.minute() != null) {
      out.writeByte(MINUTE | replacing(row));
      MinuteCount m = row.minute();
      ClickSerializer.writeString(m.code(), out);
      out.writeLong(m.minuteStart());
      out.writeLong(m.clicks());
      out.writeLong(m.botClicks());
    } else if (row.hour() != null) {
      out.writeByte(HOUR | replacing(row));
      writePeriod(row.hour(), out);
    } else if (row.day() != null) {
      out.writeByte(DAY | replacing(row));
      writePeriod(row.day(), out);
    } else if (row.dimension() != null) {
      out.writeByte(DIMENSION);
      writeDimension(row.dimension(), out);
    } else if (row.dayDimension() != null) {
      out.writeByte(DAY_DIMENSION);
      writeDimension(row.dayDimension(), out);
    } else if (row.hourKept() != null) {
      out.writeByte(HOUR_KEPT);
      writeKept(row.hourKept(), out);
    } else if (row.dayKept() != null) {
      out.writeByte(DAY_KEPT);
      writeKept(row.dayKept(), out);
    } else if (row.equals(AggregateRow.END_OF_ROUND)) {
      out.writeByte(END_OF_ROUND);
    } else {
      throw new IllegalArgumentException("a row for no table");
    }
  }

  @Override
  public AggregateRow deserialize(DataInputView in) throws IOException {
    byte table = in.readByte();
    return switch (table) {
      case MINUTE -> AggregateRow.of(readMinute(in));
      case HOUR -> AggregateRow.hourOf(readPeriod(in));
      case DAY -> AggregateRow.dayOf(readPeriod(in));
      case DIMENSION -> AggregateRow.hourOf(readDimension(in));
      case DAY_DIMENSION -> AggregateRow.dayOf(readDimension(in));
      case HOUR_KEPT -> AggregateRow.hourOf(readKept(in));
      case DAY_KEPT -> AggregateRow.dayOf(readKept(in));
      case END_OF_ROUND -> AggregateRow.END_OF_ROUND;
      case MINUTE | REPLACING -> AggregateRow.replacing(readMinute(in));
      case HOUR | REPLACING -> AggregateRow.replacingHour(readPeriod(in));
      case DAY | REPLACING -> AggregateRow.replacingDay(readPeriod(in));
      default -> throw new IOException("no table " + table);
    };
  }

  private static MinuteCount readMinute(DataInputView in) throws IOException {
    return new MinuteCount(
        ClickSerializer.readString(in), in.readLong(), in.readLong(), in.readLong());
  }

  private static int replacing(AggregateRow row) {
    return row.replaces() ? REPLACING : 0;
  }

  private static void writePeriod(PeriodTotals p, DataOutputView out) throws IOException {
    ClickSerializer.writeString(p.code(), out);
    out.writeLong(p.periodStart());
    out.writeLong(p.clicks());
    out.writeLong(p.botClicks());
    out.writeLong(p.visitors());
    byte[] sketch = p.visitorSketch();
    out.writeInt(sketch != null ? sketch.length : p.sketchKept() ? SKETCH_KEPT : NO_SKETCH);
    if (sketch != null) {
      out.write(sketch);
    }
  }

  private static PeriodTotals readPeriod(DataInputView in) throws IOException {
    String code = ClickSerializer.readString(in);
    long start = in.readLong();
    long clicks = in.readLong();
    long botClicks = in.readLong();
    long visitors = in.readLong();
    int sketchLength = in.readInt();
    byte[] sketch = null;
    if (sketchLength >= 0) {
      sketch = new byte[sketchLength];
      in.readFully(sketch);
    }
    return new PeriodTotals(
        code, start, clicks, botClicks, visitors, sketch, sketchLength == SKETCH_KEPT);
  }

  private static void writeDimension(DimensionCount d, DataOutputView out) throws IOException {
    ClickSerializer.writeString(d.code(), out);
    out.writeLong(d.periodStart());
    ClickSerializer.writeString(d.dimension(), out);
    ClickSerializer.writeString(d.value(), out);
    out.writeLong(d.clicks());
  }

  private static DimensionCount readDimension(DataInputView in) throws IOException {
    return new DimensionCount(
        ClickSerializer.readString(in),
        in.readLong(),
        ClickSerializer.readString(in),
        ClickSerializer.readString(in),
        in.readLong());
  }

  private static void writeKept(KeptValues k, DataOutputView out) throws IOException {
    ClickSerializer.writeString(k.code(), out);
    out.writeLong(k.periodStart());
    ClickSerializer.writeString(k.dimension(), out);
    out.writeInt(k.values().length);
    for (String value : k.values()) {
      ClickSerializer.writeString(value, out);
    }
  }

  private static KeptValues readKept(DataInputView in) throws IOException {
    String code = ClickSerializer.readString(in);
    long start = in.readLong();
    String dimension = ClickSerializer.readString(in);
    String[] values = new String[in.readInt()];
    for (int i = 0; i < values.length; i++) {
      values[i] = ClickSerializer.readString(in);
    }
    return new KeptValues(code, start, dimension, values);
  }

  @Override
  public TypeSerializerSnapshot<AggregateRow> snapshotConfiguration() {
    return new Snapshot();
  }

  /**
   * Restores the one serializer; Flink needs a snapshot class with a public no-argument
   * constructor.
   */
  public static final class Snapshot extends SimpleTypeSerializerSnapshot<AggregateRow> {
    public Snapshot() {
      super(() -> INSTANCE);
    }
  }
}
