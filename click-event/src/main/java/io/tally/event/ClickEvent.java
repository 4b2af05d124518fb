package io.tally.event;

import java.util.Objects;
import java.util.UUID;

/**
 * One click on a short link, as redirect-web publishes it and every consumer reads it.
 *
 * <p>The click id is made once, by the redirect that answered the click, so that a retried or
 * replayed copy of the same click can be recognised downstream. The event carries only what needs
 * the request itself; the streaming job classifies the raw user agent, so that a better
 * classification can be re-applied to the log by reconciliation. No field carries the raw client
 * address: {@code visitor} is a keyed hash of it and the user agent under a salt that changes every
 * UTC day, and {@code rangeVisitor} one without the day's salt, which only the link's visitor
 * sketches use ({@link VisitorSketches}).
 *
 * @param clickId UUIDv7 made at the click
 * @param code the short link's code
 * @param ts epoch milliseconds at the click
 *     <p>Every field is within its bound ({@link ClickFields}): the constructor refuses anything
 *     else, so an event that exists can be written, read back and stored.
 * @param visitor the day's visitor hash, or {@code ""} when none was made
 * @param rangeVisitor the visitor's key on this link across days, {@link #NO_RANGE_VISITOR} when
 *     none was made
 * @param userAgent the raw {@code User-Agent} as {@link ClickFields#userAgent} made it fit, {@code
 *     ""} when absent
 * @param referrerDomain host of the referrer, {@code ""} when there was none
 * @param country ISO country code, {@code "unknown"} when not resolvable
 * @param head whether the request was a {@code HEAD}, which no person following a link sends
 * @param burst whether the redirect found this click past the rate at which a person follows one
 *     link (one client address, one link): a bot's click of kind {@code burst}, whatever its agent
 * @param campaign the click's {@code utm_source}, {@code utm_medium} and {@code utm_campaign}
 *     (version 3); {@link Campaign#NONE} when it had none
 * @param v1 what a version-1 event said about its client, which has no user agent to classify; null
 *     for later versions
 */
public record ClickEvent(
    UUID clickId,
    String code,
    long ts,
    String visitor,
    long rangeVisitor,
    String userAgent,
    String referrerDomain,
    String country,
    boolean head,
    boolean burst,
    Campaign campaign,
    V1Client v1) {

  /**
   * The version of the event layout this code writes, which added {@link #campaign}; {@link #V2}
   * and {@link #V1} events are still read.
   */
  public static final int SCHEMA_VERSION = 3;

  public static final int V2 = 2;

  public static final int V1 = 1;

  /**
   * The campaign a click came from, as its link's URL tagged it: each {@code ""} when untagged,
   * else printable text of at most {@link ClickFields#MAX_CAMPAIGN_VALUE} characters.
   *
   * @param source {@code utm_source}: who sent the visitor (a newsletter, a site)
   * @param medium {@code utm_medium}: how (email, social, cpc)
   * @param campaign {@code utm_campaign}: which campaign
   */
  public record Campaign(String source, String medium, String campaign) {

    /** An untagged click's. */
    public static final Campaign NONE = new Campaign("", "", "");

    public Campaign {
      source = Objects.requireNonNullElse(source, "");
      medium = Objects.requireNonNullElse(medium, "");
      campaign = Objects.requireNonNullElse(campaign, "");
    }

    /** Whether no field is tagged. */
    public boolean isNone() {
      return source.isEmpty() && medium.isEmpty() && campaign.isEmpty();
    }
  }

  public static final String UNKNOWN_COUNTRY = "unknown";

  /**
   * The {@code rangeVisitor} of a click that has none: a version-1 event, or one without a hash.
   */
  public static final long NO_RANGE_VISITOR = 0L;

  /**
   * The client as a version-1 event described it, classified at the redirect.
   *
   * @param uaFamily browser family, {@code "Other"} when unknown
   * @param device device family, {@code "Other"} when unknown
   * @param bot true for crawlers, link-preview fetchers and {@code HEAD} requests
   */
  public record V1Client(String uaFamily, String device, boolean bot) {
    public V1Client {
      uaFamily = Objects.requireNonNullElse(uaFamily, "Other");
      device = Objects.requireNonNullElse(device, "Other");
    }
  }

  /**
   * A click with only the three fields every click has; the others start as a click without them
   * would carry: no visitor hash, no user agent, no referrer, country unknown, a {@code GET}, not a
   * burst, no campaign, the current version.
   */
  public static Builder builder(UUID clickId, String code, long ts) {
    return new Builder(clickId, code, ts);
  }

  /** This click's fields in a builder, to make a click that differs in some of them. */
  public Builder toBuilder() {
    return new Builder(clickId, code, ts)
        .visitor(visitor)
        .rangeVisitor(rangeVisitor)
        .userAgent(userAgent)
        .referrerDomain(referrerDomain)
        .country(country)
        .head(head)
        .burst(burst)
        .campaign(campaign)
        .v1(v1);
  }

  /**
   * Makes a {@link ClickEvent} field by field, so that a caller names the fields it sets and a new
   * field does not change every caller. {@link #build} checks the bounds as the constructor does.
   */
  public static final class Builder {
    private final UUID clickId;
    private final String code;
    private final long ts;
    private String visitor = "";
    private long rangeVisitor = NO_RANGE_VISITOR;
    private String userAgent = "";
    private String referrerDomain = "";
    private String country = UNKNOWN_COUNTRY;
    private boolean head;
    private boolean burst;
    private Campaign campaign = Campaign.NONE;
    private V1Client v1;

    private Builder(UUID clickId, String code, long ts) {
      this.clickId = clickId;
      this.code = code;
      this.ts = ts;
    }

    public Builder visitor(String visitor) {
      this.visitor = visitor;
      return this;
    }

    public Builder rangeVisitor(long rangeVisitor) {
      this.rangeVisitor = rangeVisitor;
      return this;
    }

    public Builder userAgent(String userAgent) {
      this.userAgent = userAgent;
      return this;
    }

    public Builder referrerDomain(String referrerDomain) {
      this.referrerDomain = referrerDomain;
      return this;
    }

    public Builder country(String country) {
      this.country = country;
      return this;
    }

    public Builder head(boolean head) {
      this.head = head;
      return this;
    }

    public Builder burst(boolean burst) {
      this.burst = burst;
      return this;
    }

    public Builder campaign(Campaign campaign) {
      this.campaign = campaign;
      return this;
    }

    /** What a version-1 event said about its client; null (the default) for later versions. */
    public Builder v1(V1Client v1) {
      this.v1 = v1;
      return this;
    }

    /**
     * @throws IllegalArgumentException when a field is out of its bound ({@link ClickFields})
     */
    public ClickEvent build() {
      return new ClickEvent(
          clickId,
          code,
          ts,
          visitor,
          rangeVisitor,
          userAgent,
          referrerDomain,
          country,
          head,
          burst,
          campaign,
          v1);
    }
  }

  /**
   * @throws IllegalArgumentException when a field is out of its bound ({@link ClickFields}), with
   *     the field's name
   */
  public ClickEvent {
    Objects.requireNonNull(clickId, "clickId");
    Objects.requireNonNull(code, "code");
    visitor = Objects.requireNonNullElse(visitor, "");
    userAgent = Objects.requireNonNullElse(userAgent, "");
    referrerDomain = Objects.requireNonNullElse(referrerDomain, "");
    country = Objects.requireNonNullElse(country, UNKNOWN_COUNTRY);
    campaign = Objects.requireNonNullElse(campaign, Campaign.NONE);
    String problem = ClickFields.problem(visitor, userAgent, referrerDomain, country, campaign, v1);
    if (problem != null) {
      throw new IllegalArgumentException(problem);
    }
  }
}
