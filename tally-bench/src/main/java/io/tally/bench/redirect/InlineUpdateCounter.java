package io.tally.bench.redirect;

import io.tally.redirect.ClickSink;
import io.tally.redirect.links.LinkStore;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;

/**
 * The naive way to count, which {@code bench redirect} measures the product against: one committed
 * {@code UPDATE links SET clicks = clicks + 1} per click, inside the request, on a connection from
 * the pool the redirects read their links from. The busiest link's row becomes a write hot spot,
 * and every redirect waits for a commit.
 *
 * <p>The product has no such column: {@link #open} adds it to the benchmark's own database.
 */
final class InlineUpdateCounter implements ClickSink {

  private static final String ADD_COLUMN =
      "ALTER TABLE links ADD COLUMN IF NOT EXISTS clicks BIGINT NOT NULL DEFAULT 0";
  private static final String INCREMENT = "UPDATE links SET clicks = clicks + 1 WHERE code = ?";

  private final DataSource linkDatabase;

  private InlineUpdateCounter(DataSource linkDatabase) {
    this.linkDatabase = linkDatabase;
  }

  /**
   * A counter on {@code linkDatabase}, with the {@code links.clicks} column it writes added if
   * missing.
   */
  static InlineUpdateCounter open(DataSource linkDatabase) {
    try (Connection c = linkDatabase.getConnection();
        Statement s = c.createStatement()) {
      s.execute(ADD_COLUMN);
    } catch (SQLException e) {
      throw new IllegalStateException(
          "cannot add links.clicks for the sync mode: " + e.getMessage(), e);
    }
    return new InlineUpdateCounter(linkDatabase);
  }

  /**
   * Counts the click before the redirect is answered. A failure answers the redirect 503, as any
   * database failure on the redirect path does.
   */
  @Override
  public void accept(Click click) {
    try (Connection c = linkDatabase.getConnection();
        PreparedStatement ps = c.prepareStatement(INCREMENT)) {
      ps.setString(1, click.code());
      ps.executeUpdate();
    } catch (SQLException e) {
      throw new LinkStore.StoreException("cannot count click", e);
    }
  }
}
