package io.tally.chaos;

import io.tally.event.ClickEvent;
import io.tally.event.ClickEventCodec;
import io.tally.event.MalformedReason;
import io.tally.testing.ClickEvents;
import io.tally.testing.ClickOracle;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;

/**
 * Records no producer of Tally writes but a click topic can hold all the same (a foreign producer,
 * a bug, a disk): each kind with the dead-letter reason the job must give it. A {@code null} value
 * is a tombstone.
 */
public final class PoisonRecords {

  /** One kind of poison: a name for the report, the bytes, and the reason expected in the DLQ. */
  public record Poison(String kind, byte[] value, MalformedReason reason) {}

  /** Roughly a megabyte, as the issue asks; under the broker's default 1 MiB record limit. */
  public static final int ONE_MB = 1_000_000;

  private PoisonRecords() {}

  /**
   * Every kind, built around a valid click at {@code ts} (itself not part of the list) and the
   * clock at {@code now}.
   */
  public static List<Poison> all(long ts, long now) {
    String id =
        UUID.nameUUIDFromBytes(("poison-" + ts).getBytes(StandardCharsets.UTF_8)).toString();
    String good = "\"click_id\":\"" + id + "\",\"code\":\"poison\",\"ts\":" + ts;
    byte[] valid =
        ClickEventCodec.encode(
            new ClickEvent(
                UUID.fromString(id),
                "poison",
                ts,
                "v",
                ClickEvent.NO_RANGE_VISITOR,
                ClickEvents.DESKTOP_BROWSER,
                "",
                "DE",
                false,
                null));
    List<Poison> list = new ArrayList<>();
    list.add(new Poison("plain text", text("definitely not json"), MalformedReason.NOT_JSON));
    list.add(
        new Poison(
            "truncated event", Arrays.copyOf(valid, valid.length / 2), MalformedReason.NOT_JSON));
    list.add(new Poison("empty value", new byte[0], MalformedReason.NOT_JSON));
    list.add(new Poison("null value (tombstone)", null, MalformedReason.NOT_JSON));
    list.add(new Poison("JSON array", text("[" + ts + "]"), MalformedReason.NOT_JSON));
    list.add(new Poison("JSON string", text("\"click\""), MalformedReason.NOT_JSON));
    list.add(new Poison("trailing garbage", concat(valid, text("}}")), MalformedReason.NOT_JSON));
    list.add(
        new Poison(
            "bad UTF-8 in a string",
            concat(
                text("{\"v\":2," + good + ",\"ua\":\"Moz"),
                new byte[] {(byte) 0xC3, (byte) 0x28, (byte) 0xFF},
                text("\"}")),
            MalformedReason.NOT_JSON));
    list.add(new Poison("1 MB record", oneMegabyte(good), MalformedReason.OVERSIZED));
    list.add(
        new Poison(
            "just over the size limit",
            padded(good, ClickEventCodec.MAX_EVENT_BYTES + 1),
            MalformedReason.OVERSIZED));
    list.add(
        new Poison("no schema version", text("{" + good + "}"), MalformedReason.SCHEMA_VERSION));
    list.add(
        new Poison(
            "unknown schema version 3",
            text("{\"v\":3," + good + "}"),
            MalformedReason.SCHEMA_VERSION));
    list.add(
        new Poison(
            "schema version as text",
            text("{\"v\":\"2\"," + good + "}"),
            MalformedReason.SCHEMA_VERSION));
    list.add(
        new Poison(
            "no click id",
            text("{\"v\":2,\"code\":\"poison\",\"ts\":" + ts + "}"),
            MalformedReason.CLICK_ID));
    list.add(
        new Poison(
            "click id not a UUID",
            text("{\"v\":2,\"click_id\":\"1-2-3-4-5\",\"code\":\"poison\",\"ts\":" + ts + "}"),
            MalformedReason.CLICK_ID));
    list.add(
        new Poison(
            "click id a number",
            text("{\"v\":2,\"click_id\":42,\"code\":\"poison\",\"ts\":" + ts + "}"),
            MalformedReason.CLICK_ID));
    list.add(
        new Poison(
            "no code",
            text("{\"v\":2,\"click_id\":\"" + id + "\",\"ts\":" + ts + "}"),
            MalformedReason.CODE));
    list.add(
        new Poison(
            "code with a path in it",
            text("{\"v\":2,\"click_id\":\"" + id + "\",\"code\":\"../../etc\",\"ts\":" + ts + "}"),
            MalformedReason.CODE));
    list.add(
        new Poison(
            "no timestamp",
            text("{\"v\":2,\"click_id\":\"" + id + "\",\"code\":\"poison\"}"),
            MalformedReason.TS));
    list.add(
        new Poison(
            "timestamp as text",
            text("{\"v\":2,\"click_id\":\"" + id + "\",\"code\":\"poison\",\"ts\":\"" + ts + "\"}"),
            MalformedReason.TS));
    list.add(
        new Poison(
            "timestamp with a fraction",
            text("{\"v\":2,\"click_id\":\"" + id + "\",\"code\":\"poison\",\"ts\":" + ts + ".5}"),
            MalformedReason.TS));
    list.add(
        new Poison(
            "ancient timestamp (1999)",
            text("{\"v\":2,\"click_id\":\"" + id + "\",\"code\":\"poison\",\"ts\":915148800000}"),
            MalformedReason.TS_OUT_OF_RANGE));
    list.add(
        new Poison(
            "negative timestamp",
            text("{\"v\":2,\"click_id\":\"" + id + "\",\"code\":\"poison\",\"ts\":-1}"),
            MalformedReason.TS_OUT_OF_RANGE));
    list.add(
        new Poison(
            "timestamp a day ahead",
            text(
                "{\"v\":2,\"click_id\":\""
                    + id
                    + "\",\"code\":\"poison\",\"ts\":"
                    + (now + ClickOracle.DAY)
                    + "}"),
            MalformedReason.TS_OUT_OF_RANGE));
    list.add(
        new Poison(
            "user agent a number",
            text("{\"v\":2," + good + ",\"ua\":7}"),
            MalformedReason.FIELD_TYPE));
    list.add(
        new Poison(
            "head flag as text",
            text("{\"v\":2," + good + ",\"head\":\"no\"}"),
            MalformedReason.FIELD_TYPE));
    list.add(
        new Poison(
            "country an object",
            text("{\"v\":2," + good + ",\"country\":{\"iso\":\"DE\"}}"),
            MalformedReason.FIELD_TYPE));
    list.add(
        new Poison(
            "version-1 bot flag as text",
            text("{\"v\":1," + good + ",\"bot\":\"yes\"}"),
            MalformedReason.FIELD_TYPE));
    return list;
  }

  private static byte[] oneMegabyte(String good) {
    return padded(good, ONE_MB);
  }

  /** A valid-looking event padded with an unknown field to exactly {@code size} bytes. */
  private static byte[] padded(String good, int size) {
    String head = "{\"v\":2," + good + ",\"pad\":\"";
    String tail = "\"}";
    return text(head + "x".repeat(size - head.length() - tail.length()) + tail);
  }

  private static byte[] text(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static byte[] concat(byte[]... parts) {
    int length = 0;
    for (byte[] part : parts) {
      length += part.length;
    }
    byte[] all = new byte[length];
    int at = 0;
    for (byte[] part : parts) {
      System.arraycopy(part, 0, all, at, part.length);
      at += part.length;
    }
    return all;
  }
}
