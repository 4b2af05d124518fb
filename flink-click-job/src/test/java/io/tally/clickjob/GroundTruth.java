package io.tally.clickjob;

import io.tally.event.ClickEvent;
import io.tally.event.MalformedReason;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;

/**
 * A generated click stream whose correct counts are known: several codes over ten minutes, out of
 * order within the bound, 5% of clicks delivered twice, malformed records of every kind, clicks late
 * within the allowed lateness, and clicks later than that. Fixed seed, so every run is the same stream.
 */
final class GroundTruth {

  static final String[] CODES = {"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"};
  static final int MINUTES = 10;
  static final long MINUTE = 60_000;

  /** A record to produce: its bytes, the code it is keyed by, and its timestamp. */
  record Record(String key, long ts, byte[] value) {}

  /** (code, minute start) → {human, bot}. */
  final Map<String, long[]> expected = new HashMap<>();
  final List<Record> onTime = new ArrayList<>();
  final List<Record> lateWithinLateness = new ArrayList<>();
  final List<Record> tooLate = new ArrayList<>();
  final Map<MalformedReason, Record> malformed = new LinkedHashMap<>();
  final long base;
  int duplicates;
  private final Map<ClickEvent, Record> records = new HashMap<>();

  GroundTruth(long nowMillis, long seed) {
    Random random = new Random(seed);
    base = (nowMillis / MINUTE) * MINUTE - 40 * MINUTE;
    List<ClickEvent> events = new ArrayList<>();
    for (int minute = 0; minute < MINUTES; minute++) {
      for (String code : CODES) {
        int humans = random.nextInt(12);
        int bots = random.nextInt(3);
        for (int i = 0; i < humans + bots; i++) {
          long ts = base + minute * MINUTE + random.nextInt((int) MINUTE);
          events.add(ClickEvent.minimal(uuid(random), code, ts, i >= humans));
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
      }
    }
    // Late but within the lateness: minute 8 re-fires with a larger total.
    for (String code : CODES) {
      ClickEvent e = ClickEvent.minimal(uuid(random), code, base + 8 * MINUTE + 1000, false);
      count(e);
      lateWithinLateness.add(record(e));
    }
    // Later than the lateness: minutes 1-3 closed long ago; dead-lettered, not counted.
    for (int i = 0; i < 6; i++) {
      ClickEvent e = ClickEvent.minimal(uuid(random), CODES[i], base + (1 + i % 3) * MINUTE + 500, false);
      tooLate.add(record(e));
    }
    String id = uuid(random).toString();
    long ts = base + 5 * MINUTE;
    malformed.put(MalformedReason.OVERSIZED, bad(new byte[8192]));
    malformed.put(MalformedReason.NOT_JSON, bad("definitely not json".getBytes(StandardCharsets.UTF_8)));
    malformed.put(MalformedReason.SCHEMA_VERSION, bad(json("{\"v\":2,\"click_id\":\"" + id + "\",\"code\":\"alpha\",\"ts\":" + ts + "}")));
    malformed.put(MalformedReason.CLICK_ID, bad(json("{\"v\":1,\"click_id\":\"xyz\",\"code\":\"alpha\",\"ts\":" + ts + "}")));
    malformed.put(MalformedReason.CODE, bad(json("{\"v\":1,\"click_id\":\"" + id + "\",\"code\":\"\",\"ts\":" + ts + "}")));
    malformed.put(MalformedReason.TS, bad(json("{\"v\":1,\"click_id\":\"" + id + "\",\"code\":\"alpha\"}")));
    malformed.put(MalformedReason.TS_OUT_OF_RANGE, bad(json("{\"v\":1,\"click_id\":\"" + id + "\",\"code\":\"alpha\",\"ts\":42}")));
    malformed.put(MalformedReason.FIELD_TYPE, bad(json("{\"v\":1,\"click_id\":\"" + id + "\",\"code\":\"alpha\",\"ts\":" + ts + ",\"country\":[]}")));
    // Spread the bad records through the on-time stream: they must not hold anything up.
    int step = onTime.size() / (malformed.size() + 1);
    int at = step;
    for (Record r : malformed.values()) {
      onTime.add(at, r);
      at += step + 1;
    }
  }

  /**
   * A click stamped now, used to push a partition's watermark past every generated minute. Its own
   * minute stays open (the watermark never passes now), so it is not part of the expected table.
   */
  static ClickEvent flush(String code, long now) {
    return ClickEvent.minimal(UUID.randomUUID(), code, now, false);
  }

  private void count(ClickEvent e) {
    long minute = (e.ts() / MINUTE) * MINUTE;
    long[] totals = expected.computeIfAbsent(e.code() + "@" + minute, k -> new long[2]);
    totals[e.bot() ? 1 : 0]++;
  }

  private Record record(ClickEvent e) {
    return records.computeIfAbsent(e, k -> new Record(e.code(), e.ts(), io.tally.event.ClickEventCodec.encode(e)));
  }

  private Record bad(byte[] value) {
    return new Record("broken", base + 5 * MINUTE, value);
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
