package io.tally.redirect;

import io.tally.event.ClickEvent;
import java.net.URI;
import java.util.Locale;
import java.util.UUID;

/**
 * Turns what a redirect request says about its client into a click event. The client address is
 * hashed here and goes no further; the referrer is cut down to its host.
 */
public final class ClickEventFactory {

  private final ClientAddress clientAddress;
  private final IpHasher ipHasher;
  private final UserAgentClassifier userAgents;
  private final CountryResolver countries;

  public ClickEventFactory(
      ClientAddress clientAddress, IpHasher ipHasher, UserAgentClassifier userAgents, CountryResolver countries) {
    this.clientAddress = clientAddress;
    this.ipHasher = ipHasher;
    this.userAgents = userAgents;
    this.countries = countries;
  }

  /** The facts of one request that a click event is made from. */
  public record RequestFacts(
      String peerAddress, String forwardedFor, String userAgent, String referrer, String countryHeader, boolean head) {}

  public ClickEvent create(UUID clickId, String code, long ts, RequestFacts request) {
    String address = clientAddress.resolve(request.peerAddress(), request.forwardedFor());
    UserAgentClassifier.Classification ua = userAgents.classify(request.userAgent());
    return new ClickEvent(
        clickId,
        code,
        ts,
        ipHasher.hash(address),
        ua.family(),
        ua.device(),
        referrerDomain(request.referrer()),
        countries.country(address, request.countryHeader()),
        ua.bot() || request.head());
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
