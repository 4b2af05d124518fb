package io.tally.redirect;

import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.Date;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The salt of each UTC day's visitor hash. Salts live in PostgreSQL so that every redirect-web
 * instance hashes a visitor alike; the first instance to need a day's salt makes it. {@link
 * #refresh} keeps today's and tomorrow's in memory, so a redirect never waits for the database, and
 * deletes every salt 48 hours after its day began: from then on no one, whoever holds the hashing
 * secret included, can tie that day's hashes back to addresses by trying them all.
 */
public final class VisitorSalts {

  private static final Logger LOG = LoggerFactory.getLogger(VisitorSalts.class);
  private static final int SALT_BYTES = 32;

  private final DataSource dataSource;
  private final Clock clock;
  private final SecureRandom random = new SecureRandom();
  private final Map<LocalDate, byte[]> cached = new ConcurrentHashMap<>();

  public VisitorSalts(DataSource dataSource, Clock clock) {
    this.dataSource = dataSource;
    this.clock = clock;
  }

  /**
   * The cached salt of a day, or null when it is not in memory (the database was out for a day).
   */
  public byte[] saltOf(LocalDate day) {
    return cached.get(day);
  }

  /** The UTC day of an instant in epoch milliseconds. */
  public static LocalDate dayOf(long epochMillis) {
    return LocalDate.ofEpochDay(Math.floorDiv(epochMillis, 86_400_000L));
  }

  /**
   * Makes sure today's and tomorrow's salts exist and are cached, and forgets and deletes the
   * expired ones. Runs at start-up and then every few minutes; a failure is logged and retried at
   * the next run, while redirects keep hashing with what is cached.
   */
  public void refresh() {
    LocalDate today = LocalDate.now(clock.withZone(ZoneOffset.UTC));
    LocalDate oldestKept = today.minusDays(1);
    // Forgetting comes first and on its own: a failure to make a salt must not keep an expired one
    // alive.
    cached.keySet().removeIf(day -> day.isBefore(oldestKept));
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement("DELETE FROM visitor_salts WHERE day < ?")) {
      ps.setDate(1, Date.valueOf(oldestKept));
      ps.executeUpdate();
    } catch (SQLException e) {
      LOG.warn("cannot delete expired visitor-hash salts: {}", e.getMessage());
    }
    try (Connection c = dataSource.getConnection()) {
      for (LocalDate day : new LocalDate[] {today, today.plusDays(1)}) {
        if (!cached.containsKey(day)) {
          cached.put(day, loadOrMake(c, day));
        }
      }
    } catch (SQLException e) {
      LOG.warn("cannot refresh the visitor-hash salts: {}", e.getMessage());
    }
  }

  private byte[] loadOrMake(Connection c, LocalDate day) throws SQLException {
    byte[] candidate = new byte[SALT_BYTES];
    random.nextBytes(candidate);
    try (PreparedStatement insert =
            c.prepareStatement(
                "INSERT INTO visitor_salts (day, salt) VALUES (?, ?) ON CONFLICT (day) DO NOTHING");
        PreparedStatement select =
            c.prepareStatement("SELECT salt FROM visitor_salts WHERE day = ?")) {
      insert.setDate(1, Date.valueOf(day));
      insert.setBytes(2, candidate);
      insert.executeUpdate();
      // Another instance may have made the day's salt first: everyone uses the one stored.
      select.setDate(1, Date.valueOf(day));
      try (ResultSet rs = select.executeQuery()) {
        if (!rs.next()) {
          throw new SQLException("the salt of " + day + " vanished right after it was written");
        }
        return rs.getBytes(1);
      }
    }
  }
}
