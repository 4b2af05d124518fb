package io.tally.counting.classify;

/**
 * Why a click is not counted as a person's; {@link #label()} is what {@link
 * UserAgentFacts#botKind()} and reports show.
 */
public enum BotKind {
  /** Search, SEO and AI crawlers, and whatever Yauaa classes as a robot, hacker or cloud agent. */
  CRAWLER("crawler"),
  /**
   * A chat or social app fetching the link to draw its preview card, before (or instead of) anyone
   * clicking.
   */
  PREVIEW("preview"),
  /** An uptime or synthetic-monitoring check hitting the link on a schedule. */
  MONITOR("monitor"),
  /** A programming library or command-line tool, or a request with no user agent at all. */
  HTTP_CLIENT("http-client"),
  /** An HTTP HEAD request: it reads the redirect without following it, whatever agent it names. */
  HEAD("head"),
  /**
   * A click past the rate at which a person follows one link, from one client address, as
   * redirect-web judged it ({@code TALLY_BURST_CLICKS_PER_MINUTE}) and marked on the event: its
   * agent is not classified, whatever it claims.
   */
  BURST("burst");

  private final String label;

  BotKind(String label) {
    this.label = label;
  }

  /** The lower-case name used in {@link UserAgentFacts#botKind()}, metrics and reports. */
  public String label() {
    return label;
  }
}
