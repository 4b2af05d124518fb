package io.tally.counting.serde;

import io.tally.counting.classify.UserAgentFacts;
import io.tally.counting.records.Click;
import io.tally.event.ClickEvent;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.UUID;
import java.util.stream.Stream;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeutils.SimpleTypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * Writes a {@link Click} as its click id's 16 bytes, its time, a byte for each field with a fixed
 * vocabulary (bot kind, country, browser, OS, device: {@link Vocabulary}), and its other fields'
 * UTF-8 bytes, each string as one bulk copy behind a varint length.
 *
 * <p>Every click crosses the network at least twice (to the dedup keyed by click id, then to the
 * visitor marks or the pre-aggregation), and in BATCH mode it is also written into and read back
 * from each keyed input's sort. Flink's record serializer writes a string a character at a time
 * through the paged buffers, which profiles showed as the keyed tasks' largest cost; bulk copies of
 * short ASCII strings are several times cheaper. Used only between operators ({@link #TYPE}); no
 * state holds a click, so the format has no versions to keep.
 */
public final class ClickSerializer extends ImmutableSerializer<Click> {

  public static final ClickSerializer INSTANCE = new ClickSerializer();

  /** The type to give a stream of clicks so that Flink serializes them with {@link #INSTANCE}. */
  public static final TypeInformation<Click> TYPE =
      new SerializerType<>(Click.class, INSTANCE, false);

  private static final Vocabulary BOT_KINDS =
      new Vocabulary(
          Stream.concat(UserAgentFacts.BOT_KINDS.stream(), Stream.of(UserAgentFacts.V1_BOT_KIND))
              .toList());
  private static final Vocabulary COUNTRIES =
      new Vocabulary(
          Stream.concat(Stream.of(ClickEvent.UNKNOWN_COUNTRY), Countries.CODES.stream()).toList());
  private static final Vocabulary BROWSERS = new Vocabulary(UserAgentFacts.BROWSERS);
  private static final Vocabulary OPERATING_SYSTEMS =
      new Vocabulary(UserAgentFacts.OPERATING_SYSTEMS);
  private static final Vocabulary DEVICES = new Vocabulary(UserAgentFacts.DEVICES);

  private static final int NEW_VISITOR_IN_HOUR = 1;
  private static final int NEW_VISITOR_IN_DAY = 2;

  /** The flag of a click with campaign tags, which follow the flags; an untagged one has none. */
  private static final int TAGGED = 4;

  private ClickSerializer() {}

  @Override
  public Click createInstance() {
    return null;
  }

  @Override
  public int getLength() {
    return -1;
  }

  @Override
  public void serialize(Click click, DataOutputView out) throws IOException {
    out.writeLong(click.clickId().getMostSignificantBits());
    out.writeLong(click.clickId().getLeastSignificantBits());
    writeString(click.code(), out);
    out.writeLong(click.ts());
    BOT_KINDS.write(click.botKind(), out);
    writeString(click.visitor(), out);
    out.writeLong(click.rangeVisitor());
    COUNTRIES.write(click.country(), out);
    writeString(click.referrer(), out);
    BROWSERS.write(click.browser(), out);
    OPERATING_SYSTEMS.write(click.os(), out);
    DEVICES.write(click.device(), out);
    boolean tagged = click.tagged();
    out.writeByte(
        (click.newVisitorInHour() ? NEW_VISITOR_IN_HOUR : 0)
            | (click.newVisitorInDay() ? NEW_VISITOR_IN_DAY : 0)
            | (tagged ? TAGGED : 0));
    if (tagged) {
      writeString(click.utmSource(), out);
      writeString(click.utmMedium(), out);
      writeString(click.utmCampaign(), out);
    }
  }

  @Override
  public Click deserialize(DataInputView in) throws IOException {
    UUID clickId = new UUID(in.readLong(), in.readLong());
    String code = readString(in);
    long ts = in.readLong();
    String botKind = BOT_KINDS.read(in);
    String visitor = readString(in);
    long rangeVisitor = in.readLong();
    String country = COUNTRIES.read(in);
    String referrer = readString(in);
    String browser = BROWSERS.read(in);
    String os = OPERATING_SYSTEMS.read(in);
    String device = DEVICES.read(in);
    int flags = in.readByte();
    boolean tagged = (flags & TAGGED) != 0;
    return new Click(
        clickId,
        code,
        ts,
        botKind,
        visitor,
        rangeVisitor,
        country,
        referrer,
        browser,
        os,
        device,
        (flags & NEW_VISITOR_IN_HOUR) != 0,
        (flags & NEW_VISITOR_IN_DAY) != 0,
        tagged ? readString(in) : "",
        tagged ? readString(in) : "",
        tagged ? readString(in) : "");
  }

  @Override
  public TypeSerializerSnapshot<Click> snapshotConfiguration() {
    return new Snapshot();
  }

  /** A string as a varint of its UTF-8 length plus one (0 for null), then the bytes. */
  public static void writeString(String s, DataOutputView out) throws IOException {
    if (s == null) {
      out.writeByte(0);
      return;
    }
    byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
    writeVarint(bytes.length + 1, out);
    out.write(bytes);
  }

  public static String readString(DataInputView in) throws IOException {
    int header = readVarint(in);
    if (header == 0) {
      return null;
    }
    byte[] bytes = new byte[header - 1];
    in.readFully(bytes);
    return new String(bytes, StandardCharsets.UTF_8);
  }

  private static void writeVarint(int value, DataOutputView out) throws IOException {
    while ((value & ~0x7F) != 0) {
      out.writeByte((value & 0x7F) | 0x80);
      value >>>= 7;
    }
    out.writeByte(value);
  }

  private static int readVarint(DataInputView in) throws IOException {
    int value = 0;
    for (int shift = 0; ; shift += 7) {
      int b = in.readUnsignedByte();
      value |= (b & 0x7F) << shift;
      if ((b & 0x80) == 0) {
        return value;
      }
    }
  }

  /**
   * Restores the one serializer; Flink needs a snapshot class with a public no-argument
   * constructor.
   */
  public static final class Snapshot extends SimpleTypeSerializerSnapshot<Click> {
    public Snapshot() {
      super(() -> INSTANCE);
    }
  }
}
