package io.tally.redirect;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.tally.event.ClickEvent;
import io.tally.event.ClickFields;
import java.util.List;
import java.util.UUID;

/**
 * Turns what a redirect request says about its client into a click event, keeping only what needs
 * the request itself: the client address is hashed with the user agent into the day's visitor hash
 * and into its key across days, and goes no further, the referrer is cut down to its host, and the
 * user agent travels raw (made fit by {@link ClickFields#userAgent}) for the streaming job to
 * classify, so no parsing happens on the request thread.
 *
 * <p>Every header is the client's to write, so each is brought within its field's bound ({@link
 * ClickFields}) or left out: {@link #create} makes an event for whatever a request carries, and
 * never throws for it.
 */
public final class ClickEventFactory {

  private final ClientAddress clientAddress;
  private final VisitorHasher visitors;
  private final boolean rangeVisitorKeys;
  private final CountryResolver countries;
  private final ClickBursts bursts;
  private final Counter droppedReferrers;

  /**
   * @param rangeVisitorKeys whether events carry the visitor's key across days ({@code
   *     TALLY_RANGE_VISITORS}); without it a range's unique visitors are its days' added up
   * @param bursts which clicks are past the rate at which a person follows one link
   */
  public ClickEventFactory(
      ClientAddress clientAddress,
      VisitorHasher visitors,
      boolean rangeVisitorKeys,
      CountryResolver countries,
      ClickBursts bursts,
      MeterRegistry registry) {
    this.clientAddress = clientAddress;
    this.visitors = visitors;
    this.rangeVisitorKeys = rangeVisitorKeys;
    this.countries = countries;
    this.bursts = bursts;
    this.droppedReferrers =
        Counter.builder("tally.referrers.dropped")
            .description(
                "Referer headers without a host a click event can carry (malformed, or beyond the"
                    + " bounds of a host name); their clicks are counted without a referrer")
            .register(registry);
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

  /** The event of an untagged click. */
  public ClickEvent create(UUID clickId, String code, long ts, RequestFacts request) {
    return create(clickId, code, ts, request, ClickEvent.Campaign.NONE);
  }

  /** The event of a click that came with these campaign tags ({@link ShortUrlQuery}). */
  public ClickEvent create(
      UUID clickId, String code, long ts, RequestFacts request, ClickEvent.Campaign campaign) {
    String address = clientAddress.resolve(request.peerAddress(), request.forwardedFor());
    // A CDN's country header means something only when the CDN sent the request; a client can send
    // it too.
    String countryHeader =
        clientAddress.isTrustedProxy(request.peerAddress()) ? request.countryHeader() : null;
    String userAgent = ClickFields.userAgent(request.userAgent());
    String visitor = visitors.hash(ts, code, address, userAgent);
    // A click without the day's hash counts no visitor, so its key across days would serve nothing.
    long rangeVisitor =
        visitor.isEmpty() || !rangeVisitorKeys
            ? ClickEvent.NO_RANGE_VISITOR
            : visitors.rangeKey(code, address, userAgent);
    String referrerDomain = referrerDomain(request.referrer());
    if (referrerDomain.isEmpty() && request.referrer() != null && !request.referrer().isBlank()) {
      droppedReferrers.increment();
    }
    return ClickEvent.builder(clickId, code, ts)
        .visitor(visitor)
        .rangeVisitor(rangeVisitor)
        .userAgent(userAgent)
        .referrerDomain(referrerDomain)
        .country(countries.country(address, countryHeader))
        .head(request.head())
        .burst(bursts.isBurst(address, code))
        .campaign(campaign)
        .build();
  }

  /**
   * The host of a {@code Referer} in the form events carry ({@link HostNames#eventForm}), or {@code
   * ""} when it has none that can take that form. Read by hand, because {@link java.net.URI} finds
   * no host in an international name: an optional scheme, {@code //}, user info up to the last
   * {@code @}, the host, an optional port, then the path, query or fragment.
   */
  static String referrerDomain(String referrer) {
    if (referrer == null) {
      return "";
    }
    String text = referrer.strip();
    int authorityStart = authorityStart(text);
    if (authorityStart < 0) {
      return "";
    }
    int authorityEnd = authorityStart;
    // A backslash ends the host as a slash does: browsers read "https://a.example\@b.example" so.
    while (authorityEnd < text.length() && "/?#\\".indexOf(text.charAt(authorityEnd)) < 0) {
      authorityEnd++;
    }
    int hostStart = Math.max(authorityStart, text.lastIndexOf('@', authorityEnd - 1) + 1);
    int hostEnd;
    if (hostStart < authorityEnd && text.charAt(hostStart) == '[') {
      hostEnd = text.indexOf(']', hostStart) + 1;
      if (hostEnd == 0 || hostEnd > authorityEnd) {
        return "";
      }
    } else {
      hostEnd = text.indexOf(':', hostStart);
      if (hostEnd < 0 || hostEnd > authorityEnd) {
        hostEnd = authorityEnd;
      }
    }
    if (!isPort(text, hostEnd, authorityEnd)) {
      return "";
    }
    return HostNames.eventForm(text.substring(hostStart, hostEnd));
  }

  /**
   * Where the authority of {@code url} starts, after its scheme and {@code //}, or -1 when it has
   * none.
   */
  private static int authorityStart(String url) {
    int i = 0;
    if (!url.startsWith("//")) {
      while (i < url.length() && isSchemeChar(url.charAt(i), i == 0)) {
        i++;
      }
      if (i == 0 || !url.startsWith("://", i)) {
        return -1;
      }
      i++;
    }
    return i + 2;
  }

  private static boolean isSchemeChar(char c, boolean first) {
    boolean letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    return letter || (!first && ((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.'));
  }

  /** Whether {@code text} from {@code from} to {@code to} is empty or a colon and a port number. */
  private static boolean isPort(String text, int from, int to) {
    if (from == to) {
      return true;
    }
    if (text.charAt(from) != ':' || to - from > 6) {
      return false;
    }
    int port = 0;
    for (int i = from + 1; i < to; i++) {
      char c = text.charAt(i);
      if (c < '0' || c > '9') {
        return false;
      }
      port = port * 10 + (c - '0');
    }
    return port <= 65_535;
  }
}
