package io.tally.testing;

import io.tally.event.ClickEvent;
import java.nio.ByteBuffer;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.function.Consumer;

/**
 * A generated click stream with known truth, the one that tests, benchmarks and fault scenarios
 * draw from: {@code total} deliveries over {@code codes} links (Zipf), event times rising evenly
 * over {@code [from, from + span)} with up to 1.5 s of jitter (inside the job's 5 s
 * out-of-orderness bound), people of several browsers ({@link Clients#PEOPLE}), countries and
 * referrers, bots of every kind ({@link Clients#BOTS}), and a share of deliveries that repeat a
 * recent click (same id: a producer retry or a replay). Every distinct click goes to the consumer
 * given, such as a {@link ClickOracle}. The same seed gives the same stream.
 */
public final class ClickStream {

  private static final String[] REFERRERS = {
    "", "", "t.co", "news.ycombinator.com", "www.google.com", "www.reddit.com", "mail.google.com"
  };
  private static final String[] COUNTRIES = {
    "US", "DE", "GB", "FR", "IN", "BR", "JP", ClickEvent.UNKNOWN_COUNTRY
  };
  private static final int VISITORS = 50_000;
  private static final int BOT_PERCENT = 3;
  private static final int RECENT = 4096;
  private static final long JITTER_MS = 1500;

  private final SplittableRandom random;
  private final Zipf zipf;
  private final String codePrefix;
  private final long from;
  private final long span;
  private final long total;
  private final double duplicateShare;
  private final String[] visitors = new String[VISITORS];
  private final long[] visitorKeys = new long[VISITORS];
  private final ClickEvent[] recent = new ClickEvent[RECENT];
  private final Consumer<ClickEvent> distinctClicks;

  /** Read by other threads to time faults by the stream's progress. */
  private volatile long delivered;

  private long duplicates;

  /**
   * A stream of {@code total} deliveries whose distinct clicks go to {@code distinctClicks}; link
   * {@code i} is {@link #code}{@code (codePrefix, i)}.
   */
  public ClickStream(
      Consumer<ClickEvent> distinctClicks,
      String codePrefix,
      int codes,
      long from,
      long span,
      long total,
      double duplicateShare,
      long seed) {
    this.distinctClicks = distinctClicks;
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

  /** The code of link {@code index} of a stream whose codes start with {@code prefix}. */
  public static String code(String prefix, int index) {
    return String.format(Locale.ROOT, "%s%06d", prefix, index);
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
    distinctClicks.accept(click);
    return click;
  }

  /** A new distinct click at {@code ts} (not given to the stream's consumer). */
  public ClickEvent click(long ts) {
    int link = zipf.sample(random);
    String code = code(codePrefix, link);
    long msb = (ts << 16) | 0x7000L | random.nextInt(0x1000);
    long lsb = (random.nextLong() & 0x3FFFFFFFFFFFFFFFL) | 0x8000000000000000L;
    boolean bot = random.nextInt(100) < BOT_PERCENT;
    int visitor = random.nextInt(visitors.length);
    long rangeVisitor = ClickEvents.rangeVisitor(visitorKeys[visitor], link);
    return ClickEvent.builder(new UUID(msb, lsb), code, ts)
        .visitor(visitors[visitor])
        .rangeVisitor(rangeVisitor)
        .userAgent(agent(bot ? Clients.BOTS : Clients.PEOPLE))
        .referrerDomain(REFERRERS[random.nextInt(REFERRERS.length)])
        .country(COUNTRIES[random.nextInt(COUNTRIES.length)])
        .build();
  }

  private String agent(List<Clients.Client> clients) {
    return clients.get(random.nextInt(clients.size())).userAgent();
  }

  public long delivered() {
    return delivered;
  }

  public long duplicates() {
    return duplicates;
  }
}
