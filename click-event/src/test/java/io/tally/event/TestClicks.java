package io.tally.event;

import java.util.UUID;

/**
 * Clicks made up by this module's tests. test-support's {@code ClickEvents} serves every other
 * module, but test-support depends on this one, so these tests cannot use it.
 */
final class TestClicks {

  /** A desktop browser's user agent, which the classifier reads as a person's. */
  static final String DESKTOP_BROWSER =
      "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko)"
          + " Chrome/131.0.0.0 Safari/537.36";

  private TestClicks() {}

  /** A browser's click with only the fields counting needs. */
  static ClickEvent browserClick(UUID clickId, String code, long ts) {
    return ClickEvent.builder(clickId, code, ts).userAgent(DESKTOP_BROWSER).build();
  }
}
