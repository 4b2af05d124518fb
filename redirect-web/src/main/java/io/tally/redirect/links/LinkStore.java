package io.tally.redirect.links;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;

/**
 * The links table in PostgreSQL.
 *
 * <p>Reads on the redirect path ({@link #find}, {@link #reachable}) are bounded by the lookup
 * timeout twice over: a query timeout, which asks a slow but live server to cancel, and a network
 * timeout on the connection, which is the only thing that frees a thread from a server that stopped
 * answering without closing the connection (a paused or partitioned host keeps TCP open).
 *
 * <p>After a lookup fails, lookups fail at once for the next lookup timeout but for one, which
 * tries PostgreSQL again: during an outage a flood of uncached codes would otherwise hold a request
 * thread each for the whole timeout, and take the threads that redirects to cached links need.
 */
public final class LinkStore {

  /**
   * pgjdbc sets the socket timeout itself and never uses the executor the JDBC signature asks for.
   */
  private static final Executor UNUSED = Runnable::run;

  private final DataSource dataSource;
  private final Duration lookupTimeout;

  /**
   * {@link System#nanoTime} until which lookups fail without trying; 0 while PostgreSQL answers.
   */
  private final AtomicLong failFastUntil = new AtomicLong();

  /**
   * @param lookupTimeout the longest a redirect-path read may wait for PostgreSQL (whole seconds
   *     for the query timeout, rounded up; milliseconds for the network timeout)
   */
  public LinkStore(DataSource dataSource, Duration lookupTimeout) {
    this.dataSource = dataSource;
    this.lookupTimeout = lookupTimeout;
  }

  /**
   * The columns {@link #read} reads, in its order, for a query of {@code links} under the alias
   * {@code l}.
   */
  public static final String COLUMNS =
      "l.code, l.url, l.created_at, l.disabled_at, l.tags, l.expires_at";

  /** Inserts a link without tags or expiry; returns empty when the code is taken. */
  public Optional<Link> insert(String code, String url) {
    return insert(code, url, List.of(), null);
  }

  /** Inserts a link; returns empty when the code is taken. */
  public Optional<Link> insert(String code, String url, List<String> tags, Instant expiresAt) {
    String sql =
        "INSERT INTO links AS l (code, url, tags, expires_at) VALUES (?, ?, ?, ?)"
            + " ON CONFLICT (code) DO NOTHING RETURNING "
            + COLUMNS;
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, code);
      ps.setString(2, url);
      ps.setArray(3, c.createArrayOf("text", tags.toArray()));
      ps.setTimestamp(4, expiresAt == null ? null : Timestamp.from(expiresAt));
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? Optional.of(read(rs)) : Optional.empty();
      }
    } catch (SQLException e) {
      throw new StoreException("cannot insert link", e);
    }
  }

  /** The link with this code, read within the lookup timeout. */
  public Optional<Link> find(String code) {
    claimLookup();
    String sql = "SELECT " + COLUMNS + " FROM links l WHERE code = ?";
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      // The pool puts the connection's own network timeout back when it is returned.
      c.setNetworkTimeout(UNUSED, (int) lookupTimeout.toMillis());
      ps.setQueryTimeout(queryTimeoutSeconds());
      ps.setString(1, code);
      try (ResultSet rs = ps.executeQuery()) {
        Optional<Link> link = rs.next() ? Optional.of(read(rs)) : Optional.empty();
        failFastUntil.set(0);
        return link;
      }
    } catch (SQLException e) {
      failFastUntil.set(Math.max(1, System.nanoTime() + lookupTimeout.toNanos()));
      throw new StoreException("cannot read link", e);
    }
  }

  /**
   * Returns when this lookup may ask PostgreSQL: while it answers, or as the one lookup that tries
   * again once the last failure is a lookup timeout old. Every other lookup fails here at once.
   */
  private void claimLookup() {
    long until = failFastUntil.get();
    if (until == 0) {
      return;
    }
    long now = System.nanoTime();
    if (now - until < 0
        || !failFastUntil.compareAndSet(until, Math.max(1, now + lookupTimeout.toNanos()))) {
      throw new StoreException(
          "cannot read link",
          new SQLTransientConnectionException(
              "PostgreSQL did not answer a lookup within "
                  + lookupTimeout.toMillis()
                  + " ms a moment ago"));
    }
  }

  /** Marks a link disabled; returns the link as it now is, or empty when there is no such code. */
  public Optional<Link> disable(String code) {
    String sql =
        "UPDATE links l SET disabled_at = COALESCE(disabled_at, now()) WHERE code = ?"
            + " RETURNING "
            + COLUMNS;
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, code);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? Optional.of(read(rs)) : Optional.empty();
      }
    } catch (SQLException e) {
      throw new StoreException("cannot disable link", e);
    }
  }

  /**
   * Applies a change to a link; returns the link as it now is, or empty when there is no such code.
   */
  public Optional<Link> change(String code, LinkChange change) {
    String sql =
        "UPDATE links l SET url = COALESCE(?, url), tags = COALESCE(?, tags),"
            + " expires_at = CASE WHEN ? THEN ? ELSE expires_at END WHERE code = ? RETURNING "
            + COLUMNS;
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, change.url().orElse(null));
      ps.setArray(
          2,
          change.tags().isPresent()
              ? c.createArrayOf("text", change.tags().get().toArray())
              : null);
      ps.setBoolean(3, change.changesExpiry());
      ps.setTimestamp(4, change.expiresAt() == null ? null : Timestamp.from(change.expiresAt()));
      ps.setString(5, code);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? Optional.of(read(rs)) : Optional.empty();
      }
    } catch (SQLException e) {
      throw new StoreException("cannot change link", e);
    }
  }

  /** The codes among {@code codes} that belong to links not disabled. */
  public List<String> enabledAmong(Collection<String> codes) {
    String sql =
        "SELECT code FROM links WHERE code = ANY (?) AND disabled_at IS NULL ORDER BY code";
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setArray(1, c.createArrayOf("text", codes.toArray()));
      List<String> found = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          found.add(rs.getString(1));
        }
      }
      return found;
    } catch (SQLException e) {
      throw new StoreException("cannot read links", e);
    }
  }

  /** Whether the database answers within the lookup timeout. */
  public boolean reachable() {
    try (Connection c = dataSource.getConnection()) {
      c.setNetworkTimeout(UNUSED, (int) lookupTimeout.toMillis());
      boolean valid = c.isValid(queryTimeoutSeconds());
      if (valid) {
        failFastUntil.set(0);
      }
      return valid;
    } catch (SQLException e) {
      return false;
    }
  }

  private int queryTimeoutSeconds() {
    return (int) Math.max(1, (lookupTimeout.toMillis() + 999) / 1000);
  }

  /** The link in columns 1 to 6 of a row, {@link #COLUMNS}. */
  public static Link read(ResultSet rs) throws SQLException {
    Timestamp disabled = rs.getTimestamp(4);
    Timestamp expires = rs.getTimestamp(6);
    return new Link(
        rs.getString(1),
        rs.getString(2),
        rs.getTimestamp(3).toInstant(),
        disabled == null ? null : disabled.toInstant(),
        List.of((String[]) rs.getArray(5).getArray()),
        expires == null ? null : expires.toInstant());
  }

  /** A database failure while serving a request. */
  public static final class StoreException extends RuntimeException {
    public StoreException(String message, SQLException cause) {
      super(message + ": " + cause.getMessage(), cause);
    }
  }
}
