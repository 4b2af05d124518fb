package io.tally.event;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.io.SerializedString;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.UUID;

/**
 * The one JSON codec for click events, used by every producer and consumer.
 *
 * <p>The wire form is a compact object with snake_case keys: {@code
 * {"v":2,"click_id":"…","code":"abc","ts":1764410400000,"visitor":"…","range_visitor":"…",
 * "ua":"Mozilla/5.0 …","referrer_domain":"example.com","country":"DE","head":false}}, where {@code
 * range_visitor} is 16 lower-case hex digits and absent when the click has none, and {@code
 * "burst":true} is added to a click of a burst ({@link ClickEvent#burst()}); a consumer that
 * predates it counts such a click by its agent. Unknown keys are ignored so that a newer producer
 * can add fields without breaking older consumers. Version 1, which the topic still holds, carried
 * {@code ip_hash}, {@code ua_family}, {@code device} and {@code bot} instead of the visitor hash,
 * the user agent and the head flag; it is read into {@link ClickEvent#v1()}.
 *
 * <p>Decoding never throws: every defect becomes a {@link Decoded.Malformed} with its reason, and
 * every field is held to its bound ({@link ClickFields}), the same the producer shapes it to. It
 * uses Jackson's streaming parser rather than a tree because the streaming job decodes every click.
 */
public final class ClickEventCodec {

  /** Records larger than this are refused unread; a real event is about 250 bytes. */
  public static final int MAX_EVENT_BYTES = 4096;

  /** Clicks before this instant cannot be ours: Tally did not exist. */
  public static final Instant EARLIEST_CLICK = Instant.parse("2020-01-01T00:00:00Z");

  /**
   * How far a click's {@code ts} may be ahead of its record's Kafka timestamp (clock skew between
   * hosts). The click topic's brokers refuse records stamped further than this ahead of their own
   * clock ({@code message.timestamp.after.max.ms}), so every record in the log was judged once, on
   * arrival.
   */
  public static final Duration MAX_FUTURE_SKEW = Duration.ofHours(1);

  private static final JsonFactory JSON = new JsonFactory();

  private ClickEventCodec() {}

  private static final SerializedString V = new SerializedString("v");
  private static final SerializedString CLICK_ID = new SerializedString("click_id");
  private static final SerializedString CODE = new SerializedString("code");
  private static final SerializedString TS = new SerializedString("ts");
  private static final SerializedString VISITOR = new SerializedString("visitor");
  private static final SerializedString RANGE_VISITOR = new SerializedString("range_visitor");
  private static final SerializedString UA = new SerializedString("ua");
  private static final SerializedString REFERRER_DOMAIN = new SerializedString("referrer_domain");
  private static final SerializedString COUNTRY = new SerializedString("country");
  private static final SerializedString HEAD = new SerializedString("head");
  private static final SerializedString BURST = new SerializedString("burst");
  private static final SerializedString UTM_SOURCE = new SerializedString("utm_source");
  private static final SerializedString UTM_MEDIUM = new SerializedString("utm_medium");
  private static final SerializedString UTM_CAMPAIGN = new SerializedString("utm_campaign");

  /**
   * Encodes an event to its compact JSON bytes. Every counted redirect calls this on its request
   * thread, so the field names are encoded once for all events and the bytes are copied once, from
   * the generator's buffer straight into the result.
   */
  public static byte[] encode(ClickEvent event) {
    if (event.v1() != null) {
      throw new IllegalArgumentException("version-1 events are read, never written");
    }
    EncodedBytes out = new EncodedBytes();
    try (JsonGenerator gen = JSON.createGenerator(out, JsonEncoding.UTF8)) {
      gen.writeStartObject();
      gen.writeFieldName(V);
      gen.writeNumber(ClickEvent.SCHEMA_VERSION);
      writeString(gen, CLICK_ID, event.clickId().toString());
      writeString(gen, CODE, event.code());
      gen.writeFieldName(TS);
      gen.writeNumber(event.ts());
      writeString(gen, VISITOR, event.visitor());
      if (event.rangeVisitor() != ClickEvent.NO_RANGE_VISITOR) {
        writeString(gen, RANGE_VISITOR, VisitorSketches.formatKey(event.rangeVisitor()));
      }
      writeString(gen, UA, event.userAgent());
      writeString(gen, REFERRER_DOMAIN, event.referrerDomain());
      writeString(gen, COUNTRY, event.country());
      gen.writeFieldName(HEAD);
      gen.writeBoolean(event.head());
      if (event.burst()) {
        gen.writeFieldName(BURST);
        gen.writeBoolean(true);
      }
      writeIfTagged(gen, UTM_SOURCE, event.campaign().source());
      writeIfTagged(gen, UTM_MEDIUM, event.campaign().medium());
      writeIfTagged(gen, UTM_CAMPAIGN, event.campaign().campaign());
      gen.writeEndObject();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot encode click event", e);
    }
    return out.bytes();
  }

  private static void writeString(JsonGenerator gen, SerializedString name, String value)
      throws IOException {
    gen.writeFieldName(name);
    gen.writeString(value);
  }

  private static void writeIfTagged(JsonGenerator gen, SerializedString name, String value)
      throws IOException {
    if (!value.isEmpty()) {
      writeString(gen, name, value);
    }
  }

  /**
   * Where the generator puts an event. It writes its buffer out when it is closed, and for an event
   * of a few hundred bytes that is its only write, which becomes the result without a second copy.
   */
  private static final class EncodedBytes extends OutputStream {
    private byte[] bytes = new byte[0];

    @Override
    public void write(int b) {
      write(new byte[] {(byte) b}, 0, 1);
    }

    @Override
    public void write(byte[] buffer, int offset, int length) {
      if (bytes.length == 0) {
        bytes = Arrays.copyOfRange(buffer, offset, offset + length);
      } else {
        byte[] joined = Arrays.copyOf(bytes, bytes.length + length);
        System.arraycopy(buffer, offset, joined, bytes.length, length);
        bytes = joined;
      }
    }

    byte[] bytes() {
      return bytes;
    }
  }

  /**
   * Decodes and validates a record. {@code recordTimestamp} is the Kafka record's timestamp, which
   * a click may be ahead of by {@link #MAX_FUTURE_SKEW} at most: the verdict depends on the record
   * alone, never on when or by which job it is read, so the live job and a recount agree on every
   * record.
   */
  public static Decoded decode(byte[] bytes, long recordTimestamp) {
    if (bytes == null) {
      return new Decoded.Malformed(MalformedReason.NOT_JSON, "empty record");
    }
    if (bytes.length > MAX_EVENT_BYTES) {
      return new Decoded.Malformed(
          MalformedReason.OVERSIZED, bytes.length + " bytes, limit " + MAX_EVENT_BYTES);
    }
    Fields f = new Fields();
    try (JsonParser p = JSON.createParser(bytes)) {
      if (p.nextToken() != JsonToken.START_OBJECT) {
        return new Decoded.Malformed(MalformedReason.NOT_JSON, "not a JSON object");
      }
      for (JsonToken t = p.nextToken(); t == JsonToken.FIELD_NAME; t = p.nextToken()) {
        String name = p.currentName();
        JsonToken value = p.nextToken();
        Decoded.Malformed bad = f.read(name, value, p);
        if (bad != null) {
          return bad;
        }
      }
      if (p.nextToken() != null) {
        return new Decoded.Malformed(MalformedReason.NOT_JSON, "trailing content after the object");
      }
    } catch (IOException e) {
      return new Decoded.Malformed(MalformedReason.NOT_JSON, "invalid JSON: " + firstLine(e));
    }
    return f.validate(recordTimestamp);
  }

  private static String firstLine(IOException e) {
    String message = String.valueOf(e.getMessage());
    int newline = message.indexOf('\n');
    return newline < 0 ? message : message.substring(0, newline);
  }

  /** The fields of one record while it is being read. */
  private static final class Fields {
    Integer version;
    String clickId;
    String code;
    Long ts;
    String visitor;
    long rangeVisitor = ClickEvent.NO_RANGE_VISITOR;
    String userAgent;
    String ipHash;
    String uaFamily;
    String device;
    String referrerDomain;
    String country;
    String utmSource;
    String utmMedium;
    String utmCampaign;
    boolean bot;
    boolean head;
    boolean burst;
    boolean tsNotInteger;
    Decoded.Malformed fieldTypeError;

    Decoded.Malformed read(String name, JsonToken value, JsonParser p) throws IOException {
      switch (name) {
        case "v" -> {
          if (value != JsonToken.VALUE_NUMBER_INT) {
            return new Decoded.Malformed(MalformedReason.SCHEMA_VERSION, "v is not an integer");
          }
          version = p.getIntValue();
        }
        case "click_id" -> clickId = value == JsonToken.VALUE_STRING ? p.getText() : null;
        case "code" -> code = value == JsonToken.VALUE_STRING ? p.getText() : null;
        case "ts" -> {
          if (value == JsonToken.VALUE_NUMBER_INT) {
            ts = p.getLongValue();
          } else {
            tsNotInteger = true;
          }
        }
        case "visitor" -> visitor = text(name, value, p);
        case "range_visitor" -> {
          if (value == JsonToken.VALUE_STRING) {
            try {
              rangeVisitor =
                  VisitorSketches.parseKey(
                      p.getTextCharacters(), p.getTextOffset(), p.getTextLength());
            } catch (IllegalArgumentException e) {
              return new Decoded.Malformed(MalformedReason.FIELD_TYPE, e.getMessage());
            }
          } else {
            text(name, value, p);
          }
        }
        case "ua" -> userAgent = text(name, value, p);
        case "head" -> {
          if (!value.isBoolean()) {
            return new Decoded.Malformed(MalformedReason.FIELD_TYPE, "head is not a boolean");
          }
          head = value == JsonToken.VALUE_TRUE;
        }
        case "burst" -> {
          if (!value.isBoolean()) {
            return new Decoded.Malformed(MalformedReason.FIELD_TYPE, "burst is not a boolean");
          }
          burst = value == JsonToken.VALUE_TRUE;
        }
        case "ip_hash" -> ipHash = text(name, value, p);
        case "ua_family" -> uaFamily = text(name, value, p);
        case "device" -> device = text(name, value, p);
        case "referrer_domain" -> referrerDomain = text(name, value, p);
        case "country" -> country = text(name, value, p);
        case "utm_source" -> utmSource = text(name, value, p);
        case "utm_medium" -> utmMedium = text(name, value, p);
        case "utm_campaign" -> utmCampaign = text(name, value, p);
        case "bot" -> {
          if (!value.isBoolean()) {
            return new Decoded.Malformed(MalformedReason.FIELD_TYPE, "bot is not a boolean");
          }
          bot = value == JsonToken.VALUE_TRUE;
        }
        default -> p.skipChildren();
      }
      return fieldTypeError;
    }

    private String text(String name, JsonToken value, JsonParser p) throws IOException {
      if (value == JsonToken.VALUE_STRING) {
        return p.getText();
      }
      if (value != JsonToken.VALUE_NULL) {
        fieldTypeError =
            new Decoded.Malformed(MalformedReason.FIELD_TYPE, name + " is not a string");
        p.skipChildren();
      }
      return null;
    }

    Decoded validate(long recordTimestamp) {
      if (version == null) {
        return new Decoded.Malformed(MalformedReason.SCHEMA_VERSION, "v is missing");
      }
      if (version < ClickEvent.V1 || version > ClickEvent.SCHEMA_VERSION) {
        return new Decoded.Malformed(
            MalformedReason.SCHEMA_VERSION,
            "schema version "
                + version
                + " is not one of "
                + ClickEvent.V1
                + " to "
                + ClickEvent.SCHEMA_VERSION);
      }
      UUID id = parseUuid(clickId);
      if (id == null) {
        return new Decoded.Malformed(MalformedReason.CLICK_ID, "click_id is missing or not a UUID");
      }
      if (!LinkCodes.isValid(code)) {
        return new Decoded.Malformed(MalformedReason.CODE, "code is missing or not a link code");
      }
      if (ts == null || tsNotInteger) {
        return new Decoded.Malformed(MalformedReason.TS, "ts is missing or not epoch milliseconds");
      }
      if (ts < EARLIEST_CLICK.toEpochMilli() || ts > recordTimestamp + MAX_FUTURE_SKEW.toMillis()) {
        return new Decoded.Malformed(
            MalformedReason.TS_OUT_OF_RANGE,
            "ts "
                + Instant.ofEpochMilli(ts)
                + " is implausible: before "
                + EARLIEST_CLICK
                + " or more than "
                + MAX_FUTURE_SKEW.toMinutes()
                + " minutes after its record's timestamp "
                + Instant.ofEpochMilli(recordTimestamp));
      }
      try {
        return new Decoded.Valid(
            version == ClickEvent.V1
                ? ClickEvent.builder(id, code, ts)
                    .visitor(ipHash)
                    .referrerDomain(referrerDomain)
                    .country(country)
                    .v1(new ClickEvent.V1Client(uaFamily, device, bot))
                    .build()
                : ClickEvent.builder(id, code, ts)
                    .visitor(visitor)
                    .rangeVisitor(rangeVisitor)
                    .userAgent(userAgent)
                    .referrerDomain(referrerDomain)
                    .country(country)
                    .head(head)
                    .burst(burst)
                    .campaign(new ClickEvent.Campaign(utmSource, utmMedium, utmCampaign))
                    .build());
      } catch (IllegalArgumentException outOfBound) {
        return new Decoded.Malformed(MalformedReason.FIELD_VALUE, outOfBound.getMessage());
      }
    }

    private static UUID parseUuid(String text) {
      // UUID.fromString accepts short forms like "1-2-3-4-5"; only the canonical 36-character form
      // is an id.
      if (text == null || text.length() != 36) {
        return null;
      }
      try {
        return UUID.fromString(text);
      } catch (IllegalArgumentException e) {
        return null;
      }
    }
  }
}
