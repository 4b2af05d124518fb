package io.tally.reconcile;

import java.util.Locale;

/** How a stored minute differs from the recount of the raw log. */
public enum DriftKind {
  /** The raw log has clicks for a minute the table has no row for. */
  MISSING,
  /** The table has a row the raw log does not support at all. */
  UNSUPPORTED,
  /** The table counts more than the raw log holds. */
  OVER,
  /** The table counts fewer than the raw log holds. */
  UNDER,
  /** Human clicks too high and bot clicks too low, or the other way round. */
  MIXED;

  public String label() {
    return name().toLowerCase(Locale.ROOT);
  }

  static DriftKind of(Long storedClicks, Long storedBots, Long recountClicks, Long recountBots) {
    if (storedClicks == null) {
      return MISSING;
    }
    if (recountClicks == null) {
      return UNSUPPORTED;
    }
    long humans = recountClicks - storedClicks;
    long bots = recountBots - storedBots;
    if (humans >= 0 && bots >= 0) {
      return UNDER;
    }
    if (humans <= 0 && bots <= 0) {
      return OVER;
    }
    return MIXED;
  }
}
