package io.tally.chaos;

import io.tally.counting.classify.UserAgentClassifier;
import io.tally.counting.classify.UserAgentFacts;
import io.tally.event.ClickEvent;
import io.tally.testing.ClickEvents;
import io.tally.testing.ClickOracle;
import io.tally.testing.Zipf;
import java.nio.ByteBuffer;
import java.util.Base64;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.UUID;

/**
 * A generated click stream with known truth: {@code total} deliveries over {@code codes} links
 * (Zipf), event times rising evenly over {@code [from, from + span)} with up to 1.5 s of jitter
 * (inside the job's 5 s out-of-orderness bound), people of several browsers, countries and
 * referrers, crawlers and HTTP clients, and a share of deliveries that repeat a recent click (same
 * id: a producer retry or a replay). Every distinct click goes into {@link #truth()}. The same seed
 * gives the same stream.
 */
public final class ClickStream {

  private static final String[] AGENTS = {
    ClickEvents.DESKTOP_BROWSER,
    "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like"
        + " Gecko) Version/18.1 Mobile/15E148 Safari/604.1",
    "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0",
    "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko)"
        + " Chrome/131.0.0.0 Mobile Safari/537.36",
  };
  private static final String[] BOT_AGENTS = {
    "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
    "curl/8.5.0",
    "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)",
  };
  private static final String[] REFERRERS = {"", "t.co", "news.example.com", "www.google.com"};
  private static final String[] COUNTRIES = {"US", "DE", "FR", "JP", ClickEvent.UNKNOWN_COUNTRY};
  private static final int RECENT = 2048;
  private static final long JITTER_MS = 1500;

  private final SplittableRandom random;
  private final Zipf zipf;
  private final String codePrefix;
  private final long from;
  private final long span;
  private final long total;
  private final double duplicateShare;
  private final String[] visitors = new String[5_000];
  private final long[] visitorKeys = new long[visitors.length];
  private final ClickEvent[] recent = new ClickEvent[RECENT];
  private final ClickOracle truth;

  /** Read by other threads to time faults by the stream's progress. */
  private volatile long delivered;

  private long duplicates;

  /** A stream of {@code total} deliveries whose distinct clicks are counted into {@code truth}. */
  public ClickStream(
      ClickOracle truth,
      String codePrefix,
      int codes,
      long from,
      long span,
      long total,
      double duplicateShare,
      long seed) {
    this.truth = truth;
    this.random = new SplittableRandom(seed);
    this.zipf = new Zipf(codes, 1.0);
    this.codePrefix = codePrefix;
    this.from = from;
    this.span = span;
    this.total = total;
    this.duplicateShare = duplicateShare;
    byte[] hash = new byte[16];
    for (int i = 0; i < visitors.length; i++) {
      for (int b = 0; b < hash.length; b++) {
        hash[b] = (byte) random.nextInt(256);
      }
      visitors[i] = Base64.getUrlEncoder().withoutPadding().encodeToString(hash);
      visitorKeys[i] = ByteBuffer.wrap(hash).getLong();
    }
  }

  public boolean hasNext() {
    return delivered < total;
  }

  /** The next delivery: a new click, or again a recent one. */
  public ClickEvent next() {
    long i = delivered++;
    long distinctSoFar = i - duplicates;
    if (distinctSoFar > 0 && random.nextDouble() < duplicateShare) {
      duplicates++;
      return recent[random.nextInt((int) Math.min(distinctSoFar, RECENT))];
    }
    ClickEvent click =
        click(Math.min(from + i * span / total + random.nextLong(JITTER_MS), from + span - 1));
    recent[(int) (distinctSoFar % RECENT)] = click;
    truth.add(click);
    return click;
  }

  /** A new distinct click at {@code ts} (not counted into the truth). */
  public ClickEvent click(long ts) {
    int link = zipf.sample(random);
    String code = String.format(Locale.ROOT, "%s%04d", codePrefix, link);
    long msb = (ts << 16) | 0x7000L | random.nextInt(0x1000);
    long lsb = (random.nextLong() & 0x3FFFFFFFFFFFFFFFL) | 0x8000000000000000L;
    boolean bot = random.nextInt(100) < 4;
    int visitor = random.nextInt(visitors.length);
    long rangeVisitor = ClickEvents.rangeVisitor(visitorKeys[visitor], link);
    return new ClickEvent(
        new UUID(msb, lsb),
        code,
        ts,
        visitors[visitor],
        rangeVisitor,
        bot ? BOT_AGENTS[random.nextInt(BOT_AGENTS.length)] : AGENTS[random.nextInt(AGENTS.length)],
        REFERRERS[random.nextInt(REFERRERS.length)],
        COUNTRIES[random.nextInt(COUNTRIES.length)],
        false,
        null);
  }

  /**
   * An empty truth that reads clients as the job does: the job's own user-agent classifier decides
   * what a bot is, so the truth and the job agree on that; everything else (duplicates, restarts,
   * faults) is the job's to get right.
   */
  public static ClickOracle newTruth() {
    return new ClickOracle(
        click -> {
          UserAgentFacts facts =
              UserAgentClassifier.shared().classify(click.userAgent(), click.head());
          return new ClickOracle.Facts(
              facts.botKind(), facts.browser(), facts.os(), facts.device());
        });
  }

  public ClickOracle truth() {
    return truth;
  }

  public long delivered() {
    return delivered;
  }

  public long duplicates() {
    return duplicates;
  }
}
