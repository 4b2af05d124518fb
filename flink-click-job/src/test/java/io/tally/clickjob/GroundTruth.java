package io.tally.clickjob;

import io.tally.event.ClickEvent;
import io.tally.event.ClickRecords;
import io.tally.event.MalformedReason;
import io.tally.testing.ClickEvents;
import io.tally.testing.ClickOracle;
import io.tally.testing.Clients;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * A generated click stream whose correct counts are known: several codes over ten minutes, out of
 * order within the bound, 5% of clicks delivered twice, malformed records of every kind, clicks
 * late within the allowed lateness, and clicks later than that; people from a few dozen visitors
 * per link with a few browsers, countries and referrers, bots of several kinds, and some version-1
 * events. Besides the minute counts it knows every hour's and day's totals, unique visitors and
 * breakdowns. Fixed seed, so every run is the same stream.
 */
public final class GroundTruth {

  public static final String[] CODES = {
    "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"
  };
  public static final int MINUTES = 10;
  public static final long MINUTE = 60_000;

  /** A record to produce: its bytes, the code it is keyed by, and its timestamp. */
  public record Record(String key, long ts, byte[] value) {}

  static final String[] COUNTRIES = {"DE", "US", "FR", ClickEvent.UNKNOWN_COUNTRY};
  static final String[] REFERRERS = {"", "news.example.com", "t.co"};

  /** What the tables must hold for the clicks counted (on time, and late within the lateness). */
  public final ClickOracle oracle = new ClickOracle();

  public final List<Record> onTime = new ArrayList<>();
  public final List<Record> lateWithinLateness = new ArrayList<>();
  public final List<Record> tooLate = new ArrayList<>();
  final Map<MalformedReason, Record> malformed = new LinkedHashMap<>();
  public final long base;
  int duplicates;
  private final Map<ClickEvent, Record> records = new HashMap<>();
  private final List<ClickEvent> counted = new ArrayList<>();
  private final List<ClickEvent> tooLateEvents = new ArrayList<>();
  private final Map<String, long[]> ledger = new HashMap<>();

  public GroundTruth(long nowMillis, long seed) {
    Random random = new Random(seed);
    base = (nowMillis / MINUTE) * MINUTE - 40 * MINUTE;
    List<ClickEvent> events = new ArrayList<>();
    for (int minute = 0; minute < MINUTES; minute++) {
      for (String code : CODES) {
        int humans = random.nextInt(12);
        int bots = random.nextInt(3);
        for (int i = 0; i < humans + bots; i++) {
          long ts = base + minute * MINUTE + random.nextInt((int) MINUTE);
          events.add(i < humans ? human(random, code, ts) : bot(random, code, ts));
        }
      }
    }
    // Out of order by up to 4 s, inside the job's 5 s bound.
    Map<ClickEvent, Long> jitter = new HashMap<>();
    events.forEach(e -> jitter.put(e, e.ts() + random.nextInt(4000)));
    events.sort(Comparator.comparingLong(jitter::get));
    for (ClickEvent e : events) {
      count(e);
      onTime.add(record(e));
    }
    // 5% delivered again, a little later in the stream, as a producer retry or a replay would.
    for (ClickEvent e : new ArrayList<>(events)) {
      if (random.nextInt(100) < 5) {
        int at = Math.min(onTime.size(), onTime.indexOf(record(e)) + 1 + random.nextInt(50));
        onTime.add(at, record(e));
        duplicates++;
        setAside(e, 0);
      }
    }
    // Late but within the lateness: minute 8 re-fires with a larger total.
    for (String code : CODES) {
      ClickEvent e = human(random, code, base + 8 * MINUTE + 1000);
      count(e);
      lateWithinLateness.add(record(e));
    }
    // Later than the lateness: minutes 1-3 closed long ago; dead-lettered, not counted.
    for (int i = 0; i < 6; i++) {
      ClickEvent e = human(random, CODES[i], base + (1 + i % 3) * MINUTE + 500);
      tooLate.add(record(e));
      tooLateEvents.add(e);
      setAside(e, 1);
    }
    String id = uuid(random).toString();
    long ts = base + 5 * MINUTE;
    malformed.put(MalformedReason.OVERSIZED, bad(new byte[8192]));
    malformed.put(
        MalformedReason.NOT_JSON, bad("definitely not json".getBytes(StandardCharsets.UTF_8)));
    malformed.put(
        MalformedReason.SCHEMA_VERSION,
        bad(json("{\"v\":4,\"click_id\":\"" + id + "\",\"code\":\"alpha\",\"ts\":" + ts + "}")));
    malformed.put(
        MalformedReason.CLICK_ID,
        bad(json("{\"v\":1,\"click_id\":\"xyz\",\"code\":\"alpha\",\"ts\":" + ts + "}")));
    malformed.put(
        MalformedReason.CODE,
        bad(json("{\"v\":1,\"click_id\":\"" + id + "\",\"code\":\"\",\"ts\":" + ts + "}")));
    malformed.put(
        MalformedReason.TS, bad(json("{\"v\":1,\"click_id\":\"" + id + "\",\"code\":\"alpha\"}")));
    malformed.put(
        MalformedReason.TS_OUT_OF_RANGE,
        bad(json("{\"v\":1,\"click_id\":\"" + id + "\",\"code\":\"alpha\",\"ts\":42}")));
    malformed.put(
        MalformedReason.FIELD_TYPE,
        bad(
            json(
                "{\"v\":1,\"click_id\":\""
                    + id
                    + "\",\"code\":\"alpha\",\"ts\":"
                    + ts
                    + ",\"country\":[]}")));
    // A referrer host of 48 labels of 60 random letters: it once passed the codec and stopped the
    // job at PostgreSQL's index entry limit.
    Random letters = new Random(seed);
    StringBuilder host = new StringBuilder();
    for (int label = 0; label < 48; label++) {
      host.append(label == 0 ? "" : ".");
      letters.ints(60, 'a', 'z' + 1).forEach(host::appendCodePoint);
    }
    malformed.put(
        MalformedReason.FIELD_VALUE,
        bad(
            json(
                "{\"v\":2,\"click_id\":\""
                    + id
                    + "\",\"code\":\"alpha\",\"ts\":"
                    + ts
                    + ",\"referrer_domain\":\""
                    + host
                    + "\"}")));
    // Spread the bad records through the on-time stream: they must not hold anything up. Each is
    // stamped like the click it goes before, as a producer stamps what it sends: stamped minutes
    // ahead of its neighbours, it would carry its partition's watermark past their windows, and on
    // a replay, where the other partitions can be read that far first, they would be dead-lettered
    // as late.
    int step = onTime.size() / (malformed.size() + 1);
    int at = step;
    for (Map.Entry<MalformedReason, Record> bad : malformed.entrySet()) {
      bad.setValue(new Record(bad.getValue().key(), onTime.get(at).ts(), bad.getValue().value()));
      onTime.add(at, bad.getValue());
      at += step + 1;
    }
  }

  /** Sends {@code records} to {@code topic}, each keyed and stamped as made, and flushes. */
  public static void produce(
      Producer<String, byte[]> producer, String topic, List<Record> records) {
    for (Record r : records) {
      producer.send(new ProducerRecord<>(topic, null, r.ts(), r.key(), r.value()));
    }
    producer.flush();
  }

  /**
   * One click stamped now in each of the topic's {@code partitions}: every partition's watermark
   * passes all generated minutes.
   */
  public static void flushPartitions(
      Producer<String, byte[]> producer, String topic, int partitions) {
    long now = System.currentTimeMillis();
    for (int partition = 0; partition < partitions; partition++) {
      ProducerRecord<String, byte[]> r = ClickRecords.of(topic, flush("flush-" + partition, now));
      producer.send(new ProducerRecord<>(topic, partition, r.timestamp(), r.key(), r.value()));
    }
    producer.flush();
  }

  /**
   * A click stamped now, used to push a partition's watermark past every generated minute. Its own
   * minute stays open (the watermark never passes now), so it is not part of the expected table.
   */
  public static ClickEvent flush(String code, long now) {
    return ClickEvents.minimal(UUID.randomUUID(), code, now, false);
  }

  /**
   * People's clicks on {@code code} in minute 2, each from a referrer host of its own, as a flood
   * of made-up referrer headers would send; each counted, and placed among the on-time clicks in
   * time order.
   */
  public void floodReferrers(String code, int hosts, long seed) {
    Random random = new Random(seed);
    for (int i = 0; i < hosts; i++) {
      long ts = base + 2 * MINUTE + random.nextInt((int) MINUTE);
      ClickEvent e =
          ClickEvent.builder(uuid(random), code, ts)
              .visitor(ClickEvents.visitor(code + "-flood-" + i))
              .userAgent(ClickEvents.DESKTOP_BROWSER)
              .referrerDomain("flood-" + i + ".example")
              .country("DE")
              .build();
      count(e);
      int at = 0;
      while (at < onTime.size() && onTime.get(at).ts() <= ts) {
        at++;
      }
      onTime.add(at, record(e));
    }
  }

  /**
   * A person's click. On the first half of the links one in ten is a version-1 event, as the topic
   * still holds from before version 2: its visitors bring no key across days, so those links' days
   * store no visitor sketch, and the other half's do.
   */
  private static final ClickEvent.Campaign[] CAMPAIGNS = {
    new ClickEvent.Campaign("newsletter", "email", "spring"),
    new ClickEvent.Campaign("x.com", "social", ""),
    new ClickEvent.Campaign("", "", "winter")
  };

  private ClickEvent human(Random random, String code, long ts) {
    String visitor = ClickEvents.visitor(code + "-visitor-" + random.nextInt(30));
    long rangeVisitor = ClickEvents.rangeVisitor(visitor.hashCode(), 0);
    String referrer = REFERRERS[random.nextInt(REFERRERS.length)];
    String country = COUNTRIES[random.nextInt(COUNTRIES.length)];
    boolean oldEvents = Arrays.asList(CODES).indexOf(code) < CODES.length / 2;
    if (oldEvents && random.nextInt(10) == 0) {
      // A version-1 event's ip_hash was made another way: never one of version 2's visitors.
      return ClickEvent.builder(uuid(random), code, ts)
          .visitor(ClickEvents.visitor("v1-" + visitor))
          .referrerDomain(referrer)
          .country(country)
          .v1(new ClickEvent.V1Client("Chrome", "Mac", false))
          .build();
    }
    return ClickEvent.builder(uuid(random), code, ts)
        .visitor(visitor)
        .rangeVisitor(rangeVisitor)
        .userAgent(Clients.PEOPLE.get(random.nextInt(Clients.PEOPLE.size())).userAgent())
        .referrerDomain(referrer)
        .country(country)
        // A quarter came on a tagged short URL, some with one tag only.
        .campaign(
            random.nextInt(4) == 0
                ? CAMPAIGNS[random.nextInt(CAMPAIGNS.length)]
                : ClickEvent.Campaign.NONE)
        .build();
  }

  /**
   * A bot's click: a crawler, an HTTP client, a preview fetcher, a HEAD request, or a version-1
   * bot.
   */
  private ClickEvent bot(Random random, String code, long ts) {
    String visitor = ClickEvents.visitor(code + "-bot-" + random.nextInt(5));
    int kind = random.nextInt(Clients.BOTS.size() + 2);
    if (kind == Clients.BOTS.size()) {
      return ClickEvent.builder(uuid(random), code, ts)
          .visitor(visitor)
          .userAgent(ClickEvents.DESKTOP_BROWSER)
          .country("US")
          .head(true)
          .build();
    }
    if (kind == Clients.BOTS.size() + 1) {
      return ClickEvent.builder(uuid(random), code, ts)
          .visitor(visitor)
          .country("US")
          .v1(new ClickEvent.V1Client("Googlebot", "Spider", true))
          .build();
    }
    return ClickEvent.builder(uuid(random), code, ts)
        .visitor(visitor)
        .userAgent(Clients.BOTS.get(kind).userAgent())
        .country("US")
        .build();
  }

  /**
   * What link_ledger_hourly must hold: by {@code code@hour-start-millis}, the copies dropped and
   * the clicks too late to count (none of these rows is refused).
   */
  public Map<String, List<Long>> ledger() {
    Map<String, List<Long>> rows = new HashMap<>();
    ledger.forEach((key, t) -> rows.put(key, List.of(t[0], t[1], 0L)));
    return rows;
  }

  private void setAside(ClickEvent e, int kind) {
    long hour = e.ts() - Math.floorMod(e.ts(), 60 * MINUTE);
    ledger.computeIfAbsent(e.code() + "@" + hour, k -> new long[2])[kind]++;
  }

  /** Counts a click: the generator's own, and any a test sends besides them. */
  public void count(ClickEvent e) {
    oracle.add(e);
    counted.add(e);
  }

  /**
   * What the tables must hold once the clicks later than the lateness count too, as a
   * reconciliation counts them: a new oracle of every counted click and the late ones.
   */
  public ClickOracle withTooLate() {
    ClickOracle all = new ClickOracle();
    counted.forEach(all::add);
    tooLateEvents.forEach(all::add);
    return all;
  }

  /**
   * What the tables must hold once a release that counts agents containing any of {@code
   * crawlerAgents} as crawlers has recounted every counted click: a new oracle of them, so judged.
   */
  public ClickOracle judgedWith(List<String> crawlerAgents) {
    ClickOracle judged = new ClickOracle();
    counted.forEach(e -> judged.add(e, Clients.facts(e, crawlerAgents)));
    return judged;
  }

  /**
   * What each user agent the stream sends is, as anyone reading it would say: the oracle's own
   * answers, so that it never asks the classifier it checks.
   */
  private Record record(ClickEvent e) {
    return records.computeIfAbsent(e, k -> new Record(e.code(), e.ts(), encode(e)));
  }

  /** The event's bytes: version 2 through the codec, version 1 as JSON of that layout. */
  private static byte[] encode(ClickEvent e) {
    if (e.v1() == null) {
      return io.tally.event.ClickEventCodec.encode(e);
    }
    return json(
        "{\"v\":1,\"click_id\":\""
            + e.clickId()
            + "\",\"code\":\""
            + e.code()
            + "\",\"ts\":"
            + e.ts()
            + ",\"ip_hash\":\""
            + e.visitor()
            + "\",\"ua_family\":\""
            + e.v1().uaFamily()
            + "\",\"device\":\""
            + e.v1().device()
            + "\",\"referrer_domain\":\""
            + e.referrerDomain()
            + "\",\"country\":\""
            + e.country()
            + "\",\"bot\":"
            + e.v1().bot()
            + "}");
  }

  /** A malformed record; stamped where it is placed in the stream. */
  private Record bad(byte[] value) {
    return new Record("broken", 0, value);
  }

  private static byte[] json(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static UUID uuid(Random random) {
    // Version-7 layout from the seeded random, so the stream is the same on every run.
    long msb = (random.nextLong() & 0xffffffffffff0fffL) | 0x0000000000007000L;
    long lsb = (random.nextLong() & 0x3fffffffffffffffL) | 0x8000000000000000L;
    return new UUID(msb, lsb);
  }
}
