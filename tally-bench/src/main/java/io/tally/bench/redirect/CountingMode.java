package io.tally.bench.redirect;

import io.tally.redirect.RedirectWebConfig;
import io.tally.redirect.RedirectWebServer;

/**
 * How a benchmark's redirect-web counts clicks: as the product does, or as one of the two it is
 * measured against.
 */
public enum CountingMode {
  /**
   * No counting at all, not even the click's event: the redirect alone, the ceiling the other modes
   * are compared with.
   */
  OFF,
  /** One click event to Kafka, sent without waiting: redirect-web as shipped. */
  ASYNC,
  /** A row update inside the request, like the naive design ({@link InlineUpdateCounter}). */
  SYNC;

  /** Starts a redirect-web that counts this way, otherwise configured by {@code config}. */
  RedirectWebServer start(RedirectWebConfig config) {
    return switch (this) {
      case OFF -> RedirectWebServer.start(config, (c, linkDatabase, registry) -> click -> {});
      case ASYNC -> RedirectWebServer.start(config);
      case SYNC ->
          RedirectWebServer.start(
              config, (c, linkDatabase, registry) -> InlineUpdateCounter.open(linkDatabase));
    };
  }
}
