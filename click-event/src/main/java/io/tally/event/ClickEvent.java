package io.tally.event;

import java.util.Objects;
import java.util.UUID;

/**
 * One click on a short link, as redirect-web publishes it and every consumer reads it.
 *
 * <p>The click id is made once, when the request arrives, so that a retried or replayed copy of the
 * same click can be recognised downstream. No field carries the raw client address: {@code ipHash} is a
 * keyed hash of it.
 *
 * @param clickId UUIDv7 made at the click
 * @param code the short link's code
 * @param ts epoch milliseconds at the click
 * @param ipHash keyed hash of the client address, or {@code ""} when none was made
 * @param uaFamily browser family from the user agent, {@code "Other"} when unknown
 * @param device device family from the user agent, {@code "Other"} when unknown
 * @param referrerDomain host of the referrer, {@code ""} when there was none
 * @param country ISO country code, {@code "unknown"} when not resolvable
 * @param bot true for crawlers, link-preview fetchers and {@code HEAD} requests
 */
public record ClickEvent(
    UUID clickId,
    String code,
    long ts,
    String ipHash,
    String uaFamily,
    String device,
    String referrerDomain,
    String country,
    boolean bot) {

  /** The version of the event layout this code writes and accepts. */
  public static final int SCHEMA_VERSION = 1;

  public static final String UNKNOWN_COUNTRY = "unknown";

  public ClickEvent {
    Objects.requireNonNull(clickId, "clickId");
    Objects.requireNonNull(code, "code");
    ipHash = Objects.requireNonNullElse(ipHash, "");
    uaFamily = Objects.requireNonNullElse(uaFamily, "Other");
    device = Objects.requireNonNullElse(device, "Other");
    referrerDomain = Objects.requireNonNullElse(referrerDomain, "");
    country = Objects.requireNonNullElse(country, UNKNOWN_COUNTRY);
  }

  /** A click with only the fields counting needs; the descriptive fields take their defaults. */
  public static ClickEvent minimal(UUID clickId, String code, long ts, boolean bot) {
    return new ClickEvent(clickId, code, ts, "", null, null, "", null, bot);
  }
}
