package io.tally.bench.pipeline;

import io.tally.event.ClickEvent;
import io.tally.event.ClickRecords;
import io.tally.testing.ClickEvents;
import io.tally.testing.Zipf;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.BitSet;
import java.util.List;
import java.util.Locale;
import java.util.Queue;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A generated click log with known ground truth: {@code events} records over {@code codes} links
 * drawn from a Zipf distribution, a share of them repeats of a recent click (same id, same click:
 * what a producer retry or a replay delivers), event times spread evenly over {@code [from, to)}
 * with up to 1.5 s of jitter (inside the job's 5 s out-of-orderness bound, so no click is late).
 * The same seed gives the same log.
 */
final class ClickDataset {

  /** What was written, and what the counts must add up to. */
  record Truth(
      long events,
      long distinct,
      long duplicates,
      long distinctBots,
      long rows,
      Instant from,
      Instant to,
      long bytes) {}

  private static final String[] USER_AGENTS = {
    ClickEvents.DESKTOP_BROWSER,
    "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko)"
        + " Chrome/131.0.0.0 Mobile Safari/537.36",
    "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like"
        + " Gecko) Version/18.1 Mobile/15E148 Safari/604.1",
    "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko)"
        + " Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0",
    "Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko)"
        + " SamsungBrowser/26.0 Chrome/122.0.0.0 Mobile Safari/537.36",
  };
  private static final String CRAWLER =
      "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
  private static final String[] REFERRERS = {
    "", "", "t.co", "news.ycombinator.com", "www.google.com", "www.reddit.com", "mail.google.com"
  };
  private static final String[] COUNTRIES = {"US", "DE", "GB", "FR", "IN", "BR", "JP", "unknown"};
  private static final int RECENT = 4096;
  private static final long JITTER_MS = 1500;
  private static final int SEND_ROUNDS = 5;
  private static final Logger LOG = LoggerFactory.getLogger(ClickDataset.class);

  private ClickDataset() {}

  static String code(int index) {
    return String.format(Locale.ROOT, "L%06d", index);
  }

  /**
   * Generates the log and writes every record with {@code producer}, returning once all are stored.
   */
  static Truth write(
      Producer<String, byte[]> producer,
      String topic,
      int events,
      int codes,
      double duplicateShare,
      Instant from,
      Duration span,
      long seed) {
    SplittableRandom random = new SplittableRandom(seed);
    String[] codeNames = new String[codes];
    Zipf zipf = new Zipf(codes, 1.0);
    for (int i = 0; i < codes; i++) {
      codeNames[i] = code(i);
    }
    String[] visitors = new String[50_000];
    long[] visitorKeys = new long[visitors.length];
    byte[] hash = new byte[16];
    for (int i = 0; i < visitors.length; i++) {
      for (int b = 0; b < hash.length; b++) {
        hash[b] = (byte) random.nextInt(256);
      }
      visitors[i] = Base64.getUrlEncoder().withoutPadding().encodeToString(hash);
      visitorKeys[i] = ByteBuffer.wrap(hash).getLong();
    }

    long start = from.toEpochMilli();
    long spanMs = span.toMillis();
    int minutes = (int) (spanMs / 60_000) + 2;
    BitSet rows = new BitSet(codes * minutes);
    ClickEvent[] recent = new ClickEvent[RECENT];
    int recentCount = 0;
    long distinct = 0;
    long duplicates = 0;
    long bots = 0;
    long bytes = 0;
    Queue<ProducerRecord<String, byte[]>> refused = new ConcurrentLinkedQueue<>();
    for (int i = 0; i < events; i++) {
      ClickEvent event;
      if (recentCount > 0 && random.nextDouble() < duplicateShare) {
        event = recent[random.nextInt(Math.min(recentCount, RECENT))];
        duplicates++;
      } else {
        long ts =
            Math.min(
                start + (long) i * spanMs / events + random.nextLong(JITTER_MS),
                start + spanMs - 1);
        int code = zipf.sample(random);
        long msb = (ts << 16) | 0x7000L | random.nextInt(0x1000);
        long lsb = (random.nextLong() & 0x3FFFFFFFFFFFFFFFL) | 0x8000000000000000L;
        boolean bot = random.nextInt(100) < 3;
        int visitor = random.nextInt(visitors.length);
        long rangeVisitor = ClickEvents.rangeVisitor(visitorKeys[visitor], code);
        event =
            new ClickEvent(
                new UUID(msb, lsb),
                codeNames[code],
                ts,
                visitors[visitor],
                rangeVisitor,
                bot ? CRAWLER : USER_AGENTS[random.nextInt(USER_AGENTS.length)],
                REFERRERS[random.nextInt(REFERRERS.length)],
                COUNTRIES[random.nextInt(COUNTRIES.length)],
                false,
                null);
        recent[recentCount++ % RECENT] = event;
        distinct++;
        if (bot) {
          bots++;
        }
        rows.set(code * minutes + (int) ((ts - start) / 60_000));
      }
      var record = ClickRecords.of(topic, event);
      bytes += record.value().length;
      producer.send(record, refusedInto(refused, record));
    }
    sendAgainUntilStored(producer, refused);
    return new Truth(
        events, distinct, duplicates, bots, rows.cardinality(), from, from.plus(span), bytes);
  }

  /**
   * Sends again what the broker refused (a loaded embedded broker can answer a batch with a
   * sequence error): the truth counts every record, so a lost one would leave the benchmark waiting
   * for it. A record stored twice is one more duplicate, which the job drops.
   */
  private static void sendAgainUntilStored(
      Producer<String, byte[]> producer, Queue<ProducerRecord<String, byte[]>> refused) {
    for (int round = 0; ; round++) {
      producer.flush();
      if (refused.isEmpty()) {
        return;
      }
      if (round == SEND_ROUNDS) {
        throw new IllegalStateException(
            refused.size() + " records still refused after " + SEND_ROUNDS + " rounds");
      }
      List<ProducerRecord<String, byte[]>> again = new ArrayList<>(refused);
      refused.clear();
      LOG.warn("sending again {} records the broker refused", again.size());
      for (ProducerRecord<String, byte[]> record : again) {
        producer.send(record, refusedInto(refused, record));
      }
    }
  }

  private static Callback refusedInto(
      Queue<ProducerRecord<String, byte[]>> refused, ProducerRecord<String, byte[]> record) {
    return (metadata, error) -> {
      if (error != null) {
        if (refused.isEmpty()) {
          LOG.warn("the broker refused a click record", error);
        }
        refused.add(record);
      }
    };
  }
}
