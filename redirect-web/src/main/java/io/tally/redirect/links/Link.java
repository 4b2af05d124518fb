package io.tally.redirect.links;

import java.time.Instant;
import java.util.List;

/**
 * A short link: its code, where it points, whether it was disabled, its tags and when it expires.
 *
 * @param tags the link's tags ({@link LinkTags}), in the order they were given
 * @param expiresAt when the link stops redirecting, or null when it does not expire
 */
public record Link(
    String code,
    String url,
    Instant createdAt,
    Instant disabledAt,
    List<String> tags,
    Instant expiresAt) {

  public Link {
    tags = List.copyOf(tags);
  }

  public boolean disabled() {
    return disabledAt != null;
  }

  /** Whether the link has expired by {@code now}. */
  public boolean expiredAt(Instant now) {
    return expiresAt != null && !now.isBefore(expiresAt);
  }
}
