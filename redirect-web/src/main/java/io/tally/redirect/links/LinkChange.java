package io.tally.redirect.links;

import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * What a {@code PATCH} of a link changes; what it does not name is left as it is.
 *
 * @param url the new target, already accepted by the URL policy
 * @param tags the new tags, replacing the old ones ({@link LinkTags#checked})
 * @param changesExpiry whether the expiry changes, to {@code expiresAt}
 * @param expiresAt the new expiry, null for none; read only when {@code changesExpiry}
 */
public record LinkChange(
    Optional<String> url, Optional<List<String>> tags, boolean changesExpiry, Instant expiresAt) {

  public boolean isEmpty() {
    return url.isEmpty() && tags.isEmpty() && !changesExpiry;
  }
}
