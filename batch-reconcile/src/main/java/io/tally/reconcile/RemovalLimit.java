package io.tally.reconcile;

import java.math.BigDecimal;
import java.util.Locale;
import java.util.Optional;

/**
 * The share of the stored clicks a repair may remove without {@code --force}. A recount that read
 * less than the log held (a wrong or emptied topic, a partition cut short) looks like drift
 * downwards everywhere; a repair that would take away more than this share of what it checked is
 * refused instead of trusted.
 *
 * @param maxShare the largest share of the stored clicks a repair may remove, 0..1
 * @param force whether to repair whatever it removes
 */
public record RemovalLimit(double maxShare, boolean force) {

  public static RemovalLimit of(ReconcileOptions options) {
    return new RemovalLimit(options.maxRemovedShare(), options.force());
  }

  /**
   * Why a repair that removes {@code removed} of the {@code stored} clicks it checked in {@code
   * table} is refused, if it is.
   */
  Optional<String> refusal(String table, long removed, long stored) {
    if (force || removed == 0 || removed <= maxShare * stored) {
      return Optional.empty();
    }
    return Optional.of(
        String.format(
            Locale.ROOT,
            "the repair would remove %d of the %d clicks stored in the checked rows of %s (%.1f%%),"
                + " more than --max-removed-share %s; a log that holds less than it should (a wrong"
                + " topic, a partition cut short) looks exactly like this: check the drift, then"
                + " run again with --force to apply it",
            removed,
            stored,
            table,
            stored == 0 ? 100.0 : 100.0 * removed / stored,
            share(maxShare)));
  }

  private static String share(double share) {
    BigDecimal exact = new BigDecimal(String.valueOf(share)).stripTrailingZeros();
    return exact.toPlainString() + " (" + exact.movePointRight(2).toPlainString() + "%)";
  }
}
