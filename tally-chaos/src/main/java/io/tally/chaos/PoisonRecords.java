package io.tally.chaos;

import static io.tally.event.ClickEventCodec.MAX_EVENT_BYTES;
import static io.tally.event.ClickFields.MAX_CLIENT_NAME;
import static io.tally.event.ClickFields.MAX_HOST_NAME;
import static io.tally.event.ClickFields.MAX_LABEL;
import static io.tally.event.ClickFields.MAX_USER_AGENT;
import static io.tally.event.ClickFields.VISITOR_LENGTH;
import static io.tally.event.MalformedReason.CLICK_ID;
import static io.tally.event.MalformedReason.CODE;
import static io.tally.event.MalformedReason.FIELD_TYPE;
import static io.tally.event.MalformedReason.FIELD_VALUE;
import static io.tally.event.MalformedReason.NOT_JSON;
import static io.tally.event.MalformedReason.OVERSIZED;
import static io.tally.event.MalformedReason.SCHEMA_VERSION;
import static io.tally.event.MalformedReason.TS;
import static io.tally.event.MalformedReason.TS_OUT_OF_RANGE;
import static io.tally.testing.ClickEvents.DESKTOP_BROWSER;

import io.tally.event.ClickEvent;
import io.tally.event.ClickEventCodec;
import io.tally.event.ClickFields;
import io.tally.event.MalformedReason;
import io.tally.testing.ClickEvents;
import io.tally.testing.ClickOracle;
import java.io.ByteArrayOutputStream;
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

    public boolean isCounted() {
      return counted != null;
    }

    /** What the report calls the expectation: the reason's label, or "counted". */
    public String expected() {
      return isCounted() ? "counted" : reason.label();
    }
  }

  /** Roughly a megabyte; under the broker's default 1 MiB record limit. */
  public static final int ONE_MB = 1_000_000;

  /** A 4-byte character in UTF-8 (two in UTF-16): U+1F600. */
  static final String FOUR_BYTES = "\uD83D\uDE00";

  private final long ts;
  private final String id;
  private final List<Poison> list = new ArrayList<>();

  private PoisonRecords(long ts) {
    this.ts = ts;
    this.id = UUID.nameUUIDFromBytes(text("poison-" + ts)).toString();
  }

  /**
   * Every kind, built around a valid click at {@code ts} (itself not part of the list) and the
   * clock at {@code now}.
   */
  public static List<Poison> all(long ts, long now) {
    PoisonRecords records = new PoisonRecords(ts);
    records.notEvents(now);
    records.outOfBounds();
    records.atTheBounds();
    return records.list;
  }

  /** Records that are no event, or an event whose shape is wrong: each a dead letter. */
  private void notEvents(long now) {
    byte[] valid =
        ClickEventCodec.encode(ClickEvents.minimal(UUID.fromString(id), "poison", ts, false));
    refused("plain text", NOT_JSON, text("definitely not json"));
    refused("truncated event", NOT_JSON, Arrays.copyOf(valid, valid.length / 2));
    refused("empty value", NOT_JSON, new byte[0]);
    refused("null value (tombstone)", NOT_JSON, (byte[]) null);
    refused("JSON array", NOT_JSON, "[$ts]");
    refused("JSON string", NOT_JSON, "'click'");
    refused("trailing garbage", NOT_JSON, concat(valid, text("}}")));
    byte[] badUtf8 = {(byte) 0xC3, (byte) 0x28, (byte) 0xFF};
    byte[] uaStart = text(json("{'v':2,$good,'ua':'Moz"));
    refused("bad UTF-8 in a string", NOT_JSON, concat(uaStart, badUtf8, text("\"}")));
    refused("1 MB record", OVERSIZED, padded(json("$good"), ONE_MB, "x"));
    refused("just over the size limit", OVERSIZED, padded(json("$good"), MAX_EVENT_BYTES + 1, "x"));
    refused("no schema version", SCHEMA_VERSION, "{$good}");
    refused("unknown schema version 4", SCHEMA_VERSION, "{'v':4,$good}");
    refused("schema version as text", SCHEMA_VERSION, "{'v':'2',$good}");
    refused("no click id", CLICK_ID, "{'v':2,'code':'poison','ts':$ts}");
    refused(
        "click id not a UUID", CLICK_ID, "{'v':2,'click_id':'1-2-3-4-5','code':'poison','ts':$ts}");
    refused("click id a number", CLICK_ID, "{'v':2,'click_id':42,'code':'poison','ts':$ts}");
    refused("no code", CODE, "{'v':2,'click_id':'$id','ts':$ts}");
    refused("code with a path in it", CODE, "{'v':2,'click_id':'$id','code':'../../etc','ts':$ts}");
    refused("no timestamp", TS, "{'v':2,'click_id':'$id','code':'poison'}");
    refused("timestamp as text", TS, "{'v':2,'click_id':'$id','code':'poison','ts':'$ts'}");
    refused("timestamp with a fraction", TS, "{'v':2,'click_id':'$id','code':'poison','ts':$ts.5}");
    String noTs = "{'v':2,'click_id':'$id','code':'poison','ts':";
    refused("ancient timestamp (1999)", TS_OUT_OF_RANGE, noTs + "915148800000}");
    refused("negative timestamp", TS_OUT_OF_RANGE, noTs + "-1}");
    refused("timestamp a day ahead", TS_OUT_OF_RANGE, noTs + (now + ClickOracle.DAY) + "}");
    refused("user agent a number", FIELD_TYPE, "{'v':2,$good,'ua':7}");
    refused("head flag as text", FIELD_TYPE, "{'v':2,$good,'head':'no'}");
    refused("country an object", FIELD_TYPE, "{'v':2,$good,'country':{'iso':'DE'}}");
    refused("version-1 bot flag as text", FIELD_TYPE, "{'v':1,$good,'bot':'yes'}");
  }

  /**
   * Events that parse, each with one field past its bound or holding a character that text in
   * PostgreSQL (NUL) or well-formed UTF-8 (a lone surrogate) cannot hold: each a dead letter with
   * {@code field_value}.
   */
  private void outOfBounds() {
    SplittableRandom random = new SplittableRandom(ts);
    String referrer = "referrer_domain";
    String host = hostName(3_000, 60, random);
    outOfBound("referrer host of 3,000 characters", 2, referrer, host);
    host = hostName(MAX_HOST_NAME + 1, MAX_LABEL, random);
    outOfBound("referrer host of " + (MAX_HOST_NAME + 1) + " characters", 2, referrer, host);
    host = hostName(MAX_LABEL + 1, MAX_LABEL + 1, random) + ".example";
    outOfBound("referrer label of " + (MAX_LABEL + 1) + " characters", 2, referrer, host);
    outOfBound("referrer host in Unicode", 2, referrer, "bücher.de");
    outOfBound("referrer host in upper case", 2, referrer, "News.Example.COM");
    String ua = userAgent(MAX_USER_AGENT + 1);
    outOfBound("user agent of " + (MAX_USER_AGENT + 1) + " characters", 2, "ua", ua);
    String visitor = ClickEvents.visitor("poison");
    outOfBound(
        "visitor of " + (VISITOR_LENGTH - 1) + " characters", 2, "visitor", visitor.substring(1));
    outOfBound("visitor of " + (VISITOR_LENGTH + 1) + " characters", 2, "visitor", visitor + "A");
    outOfBound("country of three letters", 2, "country", "DEU");
    outOfBound("country in lower case", 2, "country", "de");
    String family = "F".repeat(MAX_CLIENT_NAME + 1);
    outOfBound(
        "version-1 ua_family of " + (MAX_CLIENT_NAME + 1) + " characters", 1, "ua_family", family);
    // JSON escapes, so that the parser takes the record and hands the character on.
    for (String[] bad : new String[][] {{"NUL", "\\u0000"}, {"lone surrogate", "\\ud800"}}) {
      String c = bad[1];
      outOfBound(bad[0] + " in referrer_domain", 2, referrer, "exa" + c + "mple.com");
      outOfBound(bad[0] + " in country", 2, "country", "D" + c);
      outOfBound(bad[0] + " in ua", 2, "ua", "Mozilla/5.0" + c + " (X11; Linux x86_64)");
      outOfBound(bad[0] + " in visitor", 2, "visitor", visitor.substring(1) + c);
      outOfBound("version-1 " + bad[0] + " in ip_hash", 1, "ip_hash", visitor.substring(1) + c);
      outOfBound("version-1 " + bad[0] + " in ua_family", 1, "ua_family", "Chr" + c + "ome");
      outOfBound("version-1 " + bad[0] + " in device", 1, "device", "iPh" + c + "one");
    }
  }

  /**
   * Events with a field exactly at its bound, or as large as a record may be: each a click to
   * count, on a link of its own.
   */
  private void atTheBounds() {
    String unknown = ClickEvent.UNKNOWN_COUNTRY;
    String ua = userAgent(MAX_USER_AGENT);
    String kind = "user agent of " + MAX_USER_AGENT + " characters, 4-byte ones at its end";
    counted(kind, "edge-ua-" + MAX_USER_AGENT, ua, "", "DE", null);
    String host = hostName(MAX_HOST_NAME, MAX_LABEL, new SplittableRandom(ts + 1));
    kind = "referrer host of " + MAX_HOST_NAME + " characters in labels of " + MAX_LABEL;
    counted(kind, "edge-host-" + MAX_HOST_NAME, DESKTOP_BROWSER, host, "FR", null);
    counted("referrer an IPv6 literal", "edge-ipv6", DESKTOP_BROWSER, "[2001:db8::1]", "JP", null);
    counted("country unknown", "edge-country-unknown", DESKTOP_BROWSER, "", unknown, null);
    kind = "record of exactly " + MAX_EVENT_BYTES + " bytes";
    counted(kind, "edge-bytes-" + MAX_EVENT_BYTES, "", "", unknown, "x");
    kind = "record of exactly " + MAX_EVENT_BYTES + " bytes padded with 4-byte characters";
    counted(kind, "edge-bytes-" + MAX_EVENT_BYTES + "-4b", "", "", unknown, FOUR_BYTES);
  }

  private void refused(String kind, MalformedReason reason, byte[] value) {
    list.add(new Poison(kind, value, reason, null));
  }

  /** A record written as {@link #json} reads it. */
  private void refused(String kind, MalformedReason reason, String json) {
    refused(kind, reason, text(json(json)));
  }

  /** A version-{@code v} event whose {@code field} holds {@code value} (JSON string content). */
  private void outOfBound(String kind, int v, String field, String value) {
    refused(
        kind, FIELD_VALUE, text(json("{'v':" + v + ",$good,'" + field + "':'") + value + "\"}"));
  }

  /**
   * JSON with {@code '} for {@code "}, so that each record fits a line: {@code $good} stands for
   * the valid click's fields, {@code $id} and {@code $ts} for its id and time.
   */
  private String json(String template) {
    return template
        .replace("$good", "'click_id':'$id','code':'poison','ts':$ts")
        .replace("$id", id)
        .replace("$ts", String.valueOf(ts))
        .replace('\'', '"');
  }

  /**
   * A click on link {@code code} with these fields, written by hand; padded with an unknown field
   * of {@code padUnit}s to exactly {@link ClickEventCodec#MAX_EVENT_BYTES} when {@code padUnit} is
   * set. The country is left out of the record when unknown, as a reader defaults it.
   */
  private void counted(
      String kind, String code, String ua, String referrer, String country, String padUnit) {
    UUID clickId = UUID.nameUUIDFromBytes(text("poison-" + code + "-" + ts));
    ClickEvent click =
        ClickEvent.builder(clickId, code, ts)
            .userAgent(ua)
            .referrerDomain(referrer)
            .country(country)
            .build();
    StringBuilder fields =
        new StringBuilder(
            "\"click_id\":\"" + clickId + "\",\"code\":\"" + code + "\",\"ts\":" + ts);
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
            : padded(fields.toString(), MAX_EVENT_BYTES, padUnit);
    list.add(new Poison(kind, value, null, click));
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
    ByteArrayOutputStream all = new ByteArrayOutputStream();
    Arrays.stream(parts).forEach(all::writeBytes);
    return all.toByteArray();
  }
}
