package io.tally.chaos;

import io.tally.event.ClickEvent;
import io.tally.event.ClickEventCodec;
import io.tally.event.ClickFields;
import io.tally.event.MalformedReason;
import io.tally.testing.ClickEvents;
import io.tally.testing.ClickOracle;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.UUID;

/**
 * Records no producer of Tally writes but a click topic can hold all the same (a foreign producer,
 * a bug, a disk): each kind with what the job must make of it. Most must become dead letters with
 * their reason: records that are not events, and events that parse but carry a value out of its
 * bound ({@link ClickFields}), which would otherwise fail further on (a PostgreSQL column or index
 * refusing it). A few sit exactly at a bound and must be counted like any click, so that a bound
 * checked one off shows. A {@code null} value is a tombstone.
 */
public final class PoisonRecords {

  /**
   * One kind of poison: a name for the report, the bytes, and what the job must make of them: a
   * dead letter with {@code reason}, or, for a record at the edge of a bound, the click {@code
   * counted}, on a link of its own. Exactly one of the two is set.
   */
  public record Poison(String kind, byte[] value, MalformedReason reason, ClickEvent counted) {

    public Poison {
      if ((reason == null) == (counted == null)) {
        throw new IllegalArgumentException(kind + ": either a reason or a counted click");
      }
    }

    /** A poison the job must dead-letter with {@code reason}. */
    public Poison(String kind, byte[] value, MalformedReason reason) {
      this(kind, value, reason, null);
    }

    public boolean isCounted() {
      return counted != null;
    }

    /** What the report calls the expectation: the reason's label, or "counted". */
    public String expected() {
      return isCounted() ? "counted" : reason.label();
    }
  }

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
                "",
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
    outOfBounds(list, ts, good);
    atTheBounds(list, ts);
    return list;
  }

  /**
   * Events that parse, each with one field past its bound or holding a character that text in
   * PostgreSQL (NUL) or well-formed UTF-8 (a lone surrogate) cannot hold: each a dead letter with
   * {@code field_value}.
   */
  private static void outOfBounds(List<Poison> list, long ts, String good) {
    SplittableRandom random = new SplittableRandom(ts);
    String v2 = "{\"v\":2," + good;
    String v1 = "{\"v\":1," + good;
    list.add(
        fieldValue(
            "referrer host of 3,000 characters",
            v2,
            "referrer_domain",
            hostName(3_000, 60, random)));
    list.add(
        fieldValue(
            "referrer host of " + (ClickFields.MAX_HOST_NAME + 1) + " characters",
            v2,
            "referrer_domain",
            hostName(ClickFields.MAX_HOST_NAME + 1, ClickFields.MAX_LABEL, random)));
    list.add(
        fieldValue(
            "referrer label of " + (ClickFields.MAX_LABEL + 1) + " characters",
            v2,
            "referrer_domain",
            hostName(ClickFields.MAX_LABEL + 1, ClickFields.MAX_LABEL + 1, random) + ".example"));
    list.add(fieldValue("referrer host in Unicode", v2, "referrer_domain", "bücher.de"));
    list.add(fieldValue("referrer host in upper case", v2, "referrer_domain", "News.Example.COM"));
    list.add(
        fieldValue(
            "user agent of " + (ClickFields.MAX_USER_AGENT + 1) + " characters",
            v2,
            "ua",
            userAgent(ClickFields.MAX_USER_AGENT + 1)));
    String visitor = ClickEvents.visitor("poison");
    list.add(
        fieldValue(
            "visitor of " + (ClickFields.VISITOR_LENGTH - 1) + " characters",
            v2,
            "visitor",
            visitor.substring(1)));
    list.add(
        fieldValue(
            "visitor of " + (ClickFields.VISITOR_LENGTH + 1) + " characters",
            v2,
            "visitor",
            visitor + "A"));
    list.add(fieldValue("country of three letters", v2, "country", "DEU"));
    list.add(fieldValue("country in lower case", v2, "country", "de"));
    list.add(
        fieldValue(
            "version-1 ua_family of " + (ClickFields.MAX_CLIENT_NAME + 1) + " characters",
            v1,
            "ua_family",
            "F".repeat(ClickFields.MAX_CLIENT_NAME + 1)));
    // JSON escapes, so that the parser takes the record and hands the character on.
    for (String[] bad : new String[][] {{"NUL", "\\u0000"}, {"lone surrogate", "\\ud800"}}) {
      String c = bad[1];
      list.add(
          fieldValue(
              bad[0] + " in referrer_domain", v2, "referrer_domain", "exa" + c + "mple.com"));
      list.add(fieldValue(bad[0] + " in country", v2, "country", "D" + c));
      list.add(fieldValue(bad[0] + " in ua", v2, "ua", "Mozilla/5.0" + c + " (X11; Linux x86_64)"));
      list.add(fieldValue(bad[0] + " in visitor", v2, "visitor", visitor.substring(1) + c));
      list.add(
          fieldValue(
              "version-1 " + bad[0] + " in ip_hash", v1, "ip_hash", visitor.substring(1) + c));
      list.add(
          fieldValue("version-1 " + bad[0] + " in ua_family", v1, "ua_family", "Chr" + c + "ome"));
      list.add(fieldValue("version-1 " + bad[0] + " in device", v1, "device", "iPh" + c + "one"));
    }
  }

  /**
   * Events with a field exactly at its bound, or as large as a record may be: each a click to
   * count, on a link of its own.
   */
  private static void atTheBounds(List<Poison> list, long ts) {
    SplittableRandom random = new SplittableRandom(ts + 1);
    String ua = userAgent(ClickFields.MAX_USER_AGENT);
    list.add(
        counted(
            "user agent of " + ClickFields.MAX_USER_AGENT + " characters, 4-byte ones at its end",
            "edge-ua-" + ClickFields.MAX_USER_AGENT,
            ts,
            ua,
            "",
            "DE",
            null));
    list.add(
        counted(
            "referrer host of "
                + ClickFields.MAX_HOST_NAME
                + " characters in labels of "
                + ClickFields.MAX_LABEL,
            "edge-host-" + ClickFields.MAX_HOST_NAME,
            ts,
            ClickEvents.DESKTOP_BROWSER,
            hostName(ClickFields.MAX_HOST_NAME, ClickFields.MAX_LABEL, random),
            "FR",
            null));
    list.add(
        counted(
            "referrer an IPv6 literal",
            "edge-ipv6",
            ts,
            ClickEvents.DESKTOP_BROWSER,
            "[2001:db8::1]",
            "JP",
            null));
    list.add(
        counted(
            "country unknown",
            "edge-country-unknown",
            ts,
            ClickEvents.DESKTOP_BROWSER,
            "",
            ClickEvent.UNKNOWN_COUNTRY,
            null));
    list.add(
        counted(
            "record of exactly " + ClickEventCodec.MAX_EVENT_BYTES + " bytes",
            "edge-bytes-" + ClickEventCodec.MAX_EVENT_BYTES,
            ts,
            "",
            "",
            ClickEvent.UNKNOWN_COUNTRY,
            "x"));
    list.add(
        counted(
            "record of exactly "
                + ClickEventCodec.MAX_EVENT_BYTES
                + " bytes padded with 4-byte characters",
            "edge-bytes-" + ClickEventCodec.MAX_EVENT_BYTES + "-4b",
            ts,
            "",
            "",
            ClickEvent.UNKNOWN_COUNTRY,
            FOUR_BYTES));
  }

  /** A 4-byte character in UTF-8 (two in UTF-16): U+1F600. */
  static final String FOUR_BYTES = "\uD83D\uDE00";

  private static Poison fieldValue(String kind, String head, String field, String jsonText) {
    return new Poison(
        kind, text(head + ",\"" + field + "\":\"" + jsonText + "\"}"), MalformedReason.FIELD_VALUE);
  }

  /**
   * A click on link {@code code} with these fields, written by hand; padded with an unknown field
   * of {@code padUnit}s to exactly {@link ClickEventCodec#MAX_EVENT_BYTES} when {@code padUnit} is
   * set. The country is left out of the record when unknown, as a reader defaults it.
   */
  private static Poison counted(
      String kind,
      String code,
      long ts,
      String ua,
      String referrer,
      String country,
      String padUnit) {
    UUID id =
        UUID.nameUUIDFromBytes(("poison-" + code + "-" + ts).getBytes(StandardCharsets.UTF_8));
    ClickEvent click =
        new ClickEvent(
            id, code, ts, "", ClickEvent.NO_RANGE_VISITOR, ua, referrer, country, false, null);
    StringBuilder fields =
        new StringBuilder("\"click_id\":\"" + id + "\",\"code\":\"" + code + "\",\"ts\":" + ts);
    if (!ua.isEmpty()) {
      fields.append(",\"ua\":\"").append(ua).append('"');
    }
    if (!referrer.isEmpty()) {
      fields.append(",\"referrer_domain\":\"").append(referrer).append('"');
    }
    if (!country.equals(ClickEvent.UNKNOWN_COUNTRY)) {
      fields.append(",\"country\":\"").append(country).append('"');
    }
    byte[] value =
        padUnit == null
            ? text("{\"v\":2," + fields + "}")
            : padded(fields.toString(), ClickEventCodec.MAX_EVENT_BYTES, padUnit);
    return new Poison(kind, value, null, click);
  }

  /**
   * A host name of exactly {@code length} characters: random lower-case letters and digits in
   * labels of {@code label} characters, the last one shorter.
   */
  static String hostName(int length, int label, SplittableRandom random) {
    String alphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
    StringBuilder host = new StringBuilder(length);
    while (host.length() < length) {
      if (host.length() > 0) {
        host.append('.');
      }
      int left = length - host.length();
      // One short of room for a label, a dot and one more character: leave room for them.
      int take = left <= label ? left : left == label + 1 ? label - 1 : label;
      for (int i = 0; i < take; i++) {
        host.append(alphabet.charAt(random.nextInt(i == 0 ? 26 : alphabet.length())));
      }
    }
    return host.toString();
  }

  /**
   * A browser's user agent stretched to exactly {@code length} UTF-16 characters with 4-byte
   * characters, the last of them ending the text: cut one character short, a careless cut splits
   * it.
   */
  static String userAgent(int length) {
    StringBuilder ua =
        new StringBuilder(
            "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0 ");
    if ((length - ua.length()) % 2 != 0) {
      ua.append('x');
    }
    while (ua.length() < length) {
      ua.append(FOUR_BYTES);
    }
    return ua.toString();
  }

  private static byte[] oneMegabyte(String good) {
    return padded(good, ONE_MB);
  }

  /** A valid-looking event padded with an unknown field to exactly {@code size} bytes. */
  private static byte[] padded(String good, int size) {
    return padded(good, size, "x");
  }

  /**
   * An event of these fields padded with an unknown field to exactly {@code size} bytes: as many
   * {@code unit}s as fit, then single-byte characters.
   */
  private static byte[] padded(String fields, int size, String unit) {
    byte[] head = text("{\"v\":2," + fields + ",\"pad\":\"");
    byte[] tail = text("\"}");
    int room = size - head.length - tail.length;
    int units = room / text(unit).length;
    String pad = unit.repeat(units) + "x".repeat(room - units * text(unit).length);
    return concat(head, text(pad), tail);
  }

  private static byte[] text(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  static byte[] concat(byte[]... parts) {
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
