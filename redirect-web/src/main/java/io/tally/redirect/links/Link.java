package io.tally.redirect.links;

import java.time.Instant;

/** A short link: its code, where it points, and whether it was disabled. */
public record Link(String code, String url, Instant createdAt, Instant disabledAt) {

  public boolean disabled() {
    return disabledAt != null;
  }
}
