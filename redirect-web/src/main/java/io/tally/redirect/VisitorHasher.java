package io.tally.redirect;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.tally.event.ClickEvent;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.time.LocalDate;
import java.util.Arrays;
import java.util.Base64;
import java.util.function.Function;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The visitor hash of a click: HMAC-SHA256 under the operator's secret over the day's salt, the
 * link, the client address and the user agent, truncated to 128 bits. One visitor gives one hash
 * per link and UTC day, so a link's unique visitors per day can be counted; different hashes on
 * different days and on different links, so the click topic cannot follow a person across days or
 * from one link to another (every count is per link, so none changes). The secret keeps whoever
 * reads the database from trying every address against a hash; the salt, deleted after 48 hours
 * (see {@link VisitorSalts}), keeps even the secret's holder from doing so later. The raw address
 * is never stored or logged.
 *
 * <p>Unique visitors over a range of days need what the daily hash hides: that Monday's and
 * Thursday's visitor of a link are one person. {@link #rangeKey} is a 64-bit HMAC over the link,
 * the address and the user agent under a key derived from the secret, without the salt. The click
 * topic carries it, and the job folds it into per-day sketches, which keep a few bits of it per
 * slot; whoever holds the secret can still check a guessed visitor against them (ADR-008 weighs
 * that). Different on every link, like the daily hash.
 */
public final class VisitorHasher {

  private static final String RANGE_KEY_PURPOSE = "tally range visitor key";

  private final ThreadLocal<Mac> mac;
  private final ThreadLocal<Mac> rangeMac;
  private final Function<LocalDate, byte[]> saltOf;
  private final Counter withoutSalt;

  /**
   * @param saltOf the salt of a UTC day, null when unknown ({@link VisitorSalts#saltOf})
   */
  public VisitorHasher(String secret, Function<LocalDate, byte[]> saltOf, MeterRegistry registry) {
    byte[] key = secret.getBytes(StandardCharsets.UTF_8);
    this.mac = ThreadLocal.withInitial(() -> hmac(key));
    byte[] rangeKey = hmac(key).doFinal(RANGE_KEY_PURPOSE.getBytes(StandardCharsets.UTF_8));
    this.rangeMac = ThreadLocal.withInitial(() -> hmac(rangeKey));
    this.saltOf = saltOf;
    this.withoutSalt =
        Counter.builder("tally.visitor.hash.unsalted")
            .description(
                "clicks sent without a visitor hash because the day's salt was not in memory")
            .register(registry);
  }

  private static Mac hmac(byte[] key) {
    try {
      Mac m = Mac.getInstance("HmacSHA256");
      m.init(new SecretKeySpec(key, "HmacSHA256"));
      return m;
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 unavailable", e);
    }
  }

  /**
   * The hash of a visitor of link {@code code} at {@code ts}, or {@code ""} when the day's salt is
   * unknown.
   */
  public String hash(long ts, String code, String address, String userAgent) {
    byte[] salt = saltOf.apply(VisitorSalts.dayOf(ts));
    if (salt == null) {
      withoutSalt.increment();
      return "";
    }
    Mac m = mac.get();
    m.update(salt);
    m.update((byte) 0);
    byte[] digest = digest(m, code, address, userAgent);
    return Base64.getUrlEncoder().withoutPadding().encodeToString(Arrays.copyOf(digest, 16));
  }

  /**
   * The key of a visitor of link {@code code} across days ({@link
   * io.tally.event.ClickEvent#rangeVisitor()}): the same on every day, never {@link
   * io.tally.event.ClickEvent#NO_RANGE_VISITOR}.
   */
  public long rangeKey(String code, String address, String userAgent) {
    long key = ByteBuffer.wrap(digest(rangeMac.get(), code, address, userAgent)).getLong();
    return key == ClickEvent.NO_RANGE_VISITOR ? 1L : key;
  }

  private static byte[] digest(Mac m, String code, String address, String userAgent) {
    // Separators keep ("1.2.3.4", "5x") and ("1.2.3.45", "x") apart.
    m.update(code.getBytes(StandardCharsets.UTF_8));
    m.update((byte) 0);
    m.update(address.getBytes(StandardCharsets.UTF_8));
    m.update((byte) 0);
    return m.doFinal(userAgent.getBytes(StandardCharsets.UTF_8));
  }
}
