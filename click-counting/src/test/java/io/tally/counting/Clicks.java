package io.tally.counting;

import io.tally.counting.records.Click;
import io.tally.counting.records.RawClick;
import io.tally.event.ClickEvent;
import io.tally.event.ClickEventCodec;
import io.tally.event.ClickFields;
import io.tally.event.VisitorSketches;
import io.tally.testing.ClickEvents;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.UUID;
import org.apache.datasketches.cpc.CpcSketch;

/** Named instants and event factories shared by the counting tests of both jobs. */
public final class Clicks {

  /** A minute boundary all test clicks are placed around. */
  public static final Instant T0 = Instant.parse("2026-11-29T10:00:00Z");

  public static final long MINUTE = 60_000;

  private Clicks() {}

  public static long at(long offsetMillis) {
    return T0.toEpochMilli() + offsetMillis;
  }

  /** The click id a test names {@code label}: the same label, the same id. */
  public static UUID id(String label) {
    return UUID.nameUUIDFromBytes(label.getBytes(StandardCharsets.UTF_8));
  }

  /**
   * A UUIDv7 made at {@code ts} that a test names {@code label}: the same label and time, the same
   * id; its random bits are the label's.
   */
  public static UUID idAt(String label, long ts) {
    UUID named = id(label);
    long msb = ts << 16 | 0x7000L | named.getMostSignificantBits() & 0xFFF;
    long lsb = named.getLeastSignificantBits() & 0x3FFFFFFFFFFFFFFFL | 0x8000000000000000L;
    return new UUID(msb, lsb);
  }

  /** A person's click from Chrome on Windows in Germany, without a referrer or visitor hash. */
  public static Click click(String id, String code, long ts) {
    return visit(id, code, ts, "");
  }

  /**
   * A person's click from Chrome on Windows in Germany with a visitor hash; {@code visitor} is one,
   * or a name that stands for one ({@link ClickEvents#visitor}).
   */
  public static Click visit(String id, String code, long ts, String visitor) {
    return visit(id, code, ts, visitor, ClickEvent.NO_RANGE_VISITOR);
  }

  /**
   * A person's click from Chrome on Windows in Germany with a visitor hash and the visitor's key
   * across days.
   */
  public static Click visit(String id, String code, long ts, String visitor, long rangeVisitor) {
    return new Click(
        id(id),
        code,
        ts,
        "",
        ClickFields.isVisitor(visitor) ? visitor : ClickEvents.visitor(visitor),
        rangeVisitor,
        "DE",
        "",
        "Chrome",
        "Windows",
        "desktop",
        false,
        false);
  }

  /**
   * A person's click from Chrome on Windows in Germany from {@code referrer}, without a visitor.
   */
  public static Click referred(String id, String code, long ts, String referrer) {
    return new Click(
        id(id),
        code,
        ts,
        "",
        "",
        ClickEvent.NO_RANGE_VISITOR,
        "DE",
        referrer,
        "Chrome",
        "Windows",
        "desktop",
        false,
        false);
  }

  /** The stored visitor sketch of a day whose visitors have these keys across days. */
  public static byte[] visitorSketch(long... keys) {
    CpcSketch sketch = VisitorSketches.newSketch();
    for (long key : keys) {
      sketch.update(key);
    }
    return VisitorSketches.toBytes(sketch);
  }

  public static Click botClick(String id, String code, long ts) {
    return new Click(
        id(id),
        code,
        ts,
        "crawler",
        "",
        ClickEvent.NO_RANGE_VISITOR,
        "US",
        "",
        "Other",
        "Other",
        "bot",
        false,
        false);
  }

  public static ClickEvent event(String code, long ts, boolean bot) {
    return ClickEvents.minimal(UUID.randomUUID(), code, ts, bot);
  }

  /** A record of the click topic written at {@link #T0}. */
  public static RawClick raw(long offset, byte[] value) {
    return new RawClick("clicks", 0, offset, T0.toEpochMilli(), value);
  }

  /** A click's record as redirect-web writes it: stamped with the click's own time. */
  public static RawClick raw(long offset, ClickEvent event) {
    return new RawClick("clicks", 0, offset, event.ts(), ClickEventCodec.encode(event));
  }

  public static RawClick raw(long offset, String text) {
    return raw(offset, text.getBytes(StandardCharsets.UTF_8));
  }

  /** {@code click} with the id {@code id}. */
  public static Click withId(Click click, UUID id) {
    return with(click, id, click.botKind());
  }

  /** {@code click} as a classifier that calls its agent a bot of kind {@code botKind} sees it. */
  public static Click asBot(Click click, String botKind) {
    return with(click, click.clickId(), botKind);
  }

  private static Click with(Click click, UUID id, String botKind) {
    return new Click(
        id,
        click.code(),
        click.ts(),
        botKind,
        click.visitor(),
        click.rangeVisitor(),
        click.country(),
        click.referrer(),
        click.browser(),
        click.os(),
        click.device(),
        click.newVisitorInHour(),
        click.newVisitorInDay(),
        click.utmSource(),
        click.utmMedium(),
        click.utmCampaign());
  }
}
