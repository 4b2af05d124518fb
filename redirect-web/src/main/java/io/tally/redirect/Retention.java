package io.tally.redirect;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Applies Tally's retention to the count tables: minute rows are kept {@code minuteDays} days, hour
 * rows (counts and breakdowns) and the audit ledger's rows {@value #HOUR_DAYS} days, day rows for
 * ever. Deletes in bounded batches so that a first run on a large table neither holds long locks
 * nor bloats one transaction. Every instance may run it; running it twice deletes nothing more.
 */
public final class Retention {

  /** Days hour rows are kept. */
  public static final int HOUR_DAYS = 400;

  private static final Logger LOG = LoggerFactory.getLogger(Retention.class);
  private static final int BATCH = 10_000;

  private final DataSource dataSource;
  private final Clock clock;
  private final int minuteDays;

  public Retention(DataSource dataSource, Clock clock, int minuteDays) {
    this.dataSource = dataSource;
    this.clock = clock;
    this.minuteDays = minuteDays;
  }

  /**
   * Deletes every row past its retention; returns how many rows went. Failures are logged, not
   * thrown.
   */
  public long apply() {
    Instant today =
        LocalDate.now(clock.withZone(ZoneOffset.UTC)).atStartOfDay(ZoneOffset.UTC).toInstant();
    long deleted = 0;
    try (Connection c = dataSource.getConnection()) {
      deleted +=
          deleteBefore(c, "click_counts", "minute", today.minus(Duration.ofDays(minuteDays)));
      deleted += deleteBefore(c, "click_hourly", "hour", today.minus(Duration.ofDays(HOUR_DAYS)));
      deleted +=
          deleteBefore(
              c, "click_dimensions_hourly", "hour", today.minus(Duration.ofDays(HOUR_DAYS)));
      // The audit ledger's rows go with the hours they explain.
      deleted +=
          deleteBefore(c, "link_ledger_hourly", "hour", today.minus(Duration.ofDays(HOUR_DAYS)));
      deleted +=
          deleteBefore(c, "click_send_drops", "minute", today.minus(Duration.ofDays(HOUR_DAYS)));
    } catch (SQLException e) {
      LOG.warn("cannot apply retention: {}", e.getMessage());
    }
    if (deleted > 0) {
      LOG.info("retention deleted {} count rows", deleted);
    }
    return deleted;
  }

  private static long deleteBefore(Connection c, String table, String column, Instant cutoff)
      throws SQLException {
    // ctid batches: PostgreSQL's DELETE has no LIMIT.
    String sql =
        "DELETE FROM "
            + table
            + " WHERE ctid = ANY (ARRAY(SELECT ctid FROM "
            + table
            + " WHERE "
            + column
            + " < ? LIMIT "
            + BATCH
            + "))";
    long total = 0;
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setTimestamp(1, Timestamp.from(cutoff));
      int n;
      do {
        n = ps.executeUpdate();
        total += n;
      } while (n == BATCH);
    }
    return total;
  }
}
