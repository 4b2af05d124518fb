package io.tally.redirect;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.util.Optional;
import javax.sql.DataSource;

/** The links table in PostgreSQL. */
public final class LinkStore {

  private final DataSource dataSource;

  public LinkStore(DataSource dataSource) {
    this.dataSource = dataSource;
  }

  /** Inserts a link; returns empty when the code is taken. */
  public Optional<Link> insert(String code, String url) {
    String sql = "INSERT INTO links (code, url) VALUES (?, ?) ON CONFLICT (code) DO NOTHING"
        + " RETURNING code, url, created_at, disabled_at";
    try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, code);
      ps.setString(2, url);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? Optional.of(read(rs)) : Optional.empty();
      }
    } catch (SQLException e) {
      throw new StoreException("cannot insert link", e);
    }
  }

  public Optional<Link> find(String code) {
    String sql = "SELECT code, url, created_at, disabled_at FROM links WHERE code = ?";
    try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, code);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? Optional.of(read(rs)) : Optional.empty();
      }
    } catch (SQLException e) {
      throw new StoreException("cannot read link", e);
    }
  }

  /** Marks a link disabled; returns the link as it now is, or empty when there is no such code. */
  public Optional<Link> disable(String code) {
    String sql = "UPDATE links SET disabled_at = COALESCE(disabled_at, now()) WHERE code = ?"
        + " RETURNING code, url, created_at, disabled_at";
    try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, code);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? Optional.of(read(rs)) : Optional.empty();
      }
    } catch (SQLException e) {
      throw new StoreException("cannot disable link", e);
    }
  }

  /** The naive inline counter of the {@link CountingMode#SYNC} mode: one committed row update per click. */
  public void incrementClicks(String code) {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement("UPDATE links SET clicks = clicks + 1 WHERE code = ?")) {
      ps.setString(1, code);
      ps.executeUpdate();
    } catch (SQLException e) {
      throw new StoreException("cannot count click", e);
    }
  }

  /** Whether the database answers. */
  public boolean reachable() {
    try (Connection c = dataSource.getConnection()) {
      return c.isValid(2);
    } catch (SQLException e) {
      return false;
    }
  }

  /** The link in columns 1 to 4 of a row: code, url, created_at, disabled_at. */
  public static Link read(ResultSet rs) throws SQLException {
    Timestamp disabled = rs.getTimestamp(4);
    return new Link(
        rs.getString(1), rs.getString(2), rs.getTimestamp(3).toInstant(), disabled == null ? null : disabled.toInstant());
  }

  /** A database failure while serving a request. */
  public static final class StoreException extends RuntimeException {
    public StoreException(String message, SQLException cause) {
      super(message + ": " + cause.getMessage(), cause);
    }
  }
}
