package io.tally.redirect;

import io.tally.event.ClickEvent;
import java.net.URI;
import java.util.List;
import java.util.Locale;
import java.util.UUID;

/**
 * Turns what a redirect request says about its client into a click event, keeping only what needs
 * the request itself: the client address is hashed with the user agent into the day's visitor hash
 * and into its key across days, and goes no further, the referrer is cut down to its host, and the
 * user agent travels raw (capped) for the streaming job to classify, so no parsing happens on the
 * request thread.
 */
public final class ClickEventFactory {

  private final ClientAddress clientAddress;
  private final VisitorHasher visitors;
  private final boolean rangeVisitorKeys;
  private final CountryResolver countries;

  /**
   * @param rangeVisitorKeys whether events carry the visitor's key across days ({@code
   *     TALLY_RANGE_VISITORS}); without it a range's unique visitors are its days' added up
   */
  public ClickEventFactory(
      ClientAddress clientAddress,
      VisitorHasher visitors,
      boolean rangeVisitorKeys,
      CountryResolver countries) {
    this.clientAddress = clientAddress;
    this.visitors = visitors;
    this.rangeVisitorKeys = rangeVisitorKeys;
    this.countries = countries;
  }

  /**
   * The facts of one request that a click event is made from.
   *
   * @param forwardedFor every {@code X-Forwarded-For} line, in order (empty when there is none)
   * @param countryHeader the value of the configured country header, or null; believed only from a
   *     trusted proxy
   */
  public record RequestFacts(
      String peerAddress,
      List<String> forwardedFor,
      String userAgent,
      String referrer,
      String countryHeader,
      boolean head) {}

  public ClickEvent create(UUID clickId, String code, long ts, RequestFacts request) {
    String address = clientAddress.resolve(request.peerAddress(), request.forwardedFor());
    // A CDN's country header means something only when the CDN sent the request; a client can send
    // it too.
    String countryHeader =
        clientAddress.isTrustedProxy(request.peerAddress()) ? request.countryHeader() : null;
    String userAgent =
        request.userAgent() == null ? "" : ClickEvent.capUserAgent(request.userAgent());
    String visitor = visitors.hash(ts, code, address, userAgent);
    // A click without the day's hash counts no visitor, so its key across days would serve nothing.
    long rangeVisitor =
        visitor.isEmpty() || !rangeVisitorKeys
            ? ClickEvent.NO_RANGE_VISITOR
            : visitors.rangeKey(code, address, userAgent);
    return new ClickEvent(
        clickId,
        code,
        ts,
        visitor,
        rangeVisitor,
        userAgent,
        referrerDomain(request.referrer()),
        countries.country(address, countryHeader),
        request.head(),
        null);
  }

  static String referrerDomain(String referrer) {
    if (referrer == null || referrer.isBlank()) {
      return "";
    }
    try {
      String host = URI.create(referrer.trim()).getHost();
      return host == null ? "" : host.toLowerCase(Locale.ROOT);
    } catch (IllegalArgumentException e) {
      return "";
    }
  }
}
