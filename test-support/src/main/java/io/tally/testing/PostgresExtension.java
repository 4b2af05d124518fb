package io.tally.testing;

import io.tally.embedded.EmbeddedPostgresServer;
import io.tally.schema.TallySchema;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Gives a test class a real PostgreSQL with Tally's schema applied by Flyway from {@code sql/}. One
 * server serves the whole test JVM; {@link #truncateAll()} empties the tables between tests.
 */
public final class PostgresExtension implements BeforeAllCallback {

  private EmbeddedPostgresServer server;

  @Override
  public void beforeAll(ExtensionContext context) {
    server =
        context
            .getRoot()
            .getStore(ExtensionContext.Namespace.GLOBAL)
            .getOrComputeIfAbsent(
                EmbeddedPostgresServer.class, key -> startMigrated(), CloseableServer.class)
            .server();
  }

  /**
   * A migrated server of the caller's own, for tests outside JUnit Jupiter's extensions (jqwik
   * properties); the caller closes it.
   */
  public static EmbeddedPostgresServer startOwn() {
    return startMigrated().server();
  }

  private static CloseableServer startMigrated() {
    EmbeddedPostgresServer server =
        EmbeddedPostgresServer.start(
            TestDirectories.fresh("pg"), 0, EmbeddedPostgresServer.Durability.FAST);
    TallySchema.migrate(server.jdbcUrl(), EmbeddedPostgresServer.USER, "");
    return new CloseableServer(server);
  }

  public String jdbcUrl() {
    return server.jdbcUrl();
  }

  public String user() {
    return EmbeddedPostgresServer.USER;
  }

  public String password() {
    return "";
  }

  public Connection connect() throws SQLException {
    return DriverManager.getConnection(jdbcUrl(), user(), password());
  }

  /** The rows of a query whose first column is a key and whose other columns are numbers. */
  public Map<String, List<Long>> rows(String sql) {
    Map<String, List<Long>> rows = new HashMap<>();
    try (Connection c = connect();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      int columns = rs.getMetaData().getColumnCount();
      while (rs.next()) {
        List<Long> values = new ArrayList<>();
        for (int i = 2; i <= columns; i++) {
          values.add(rs.getLong(i));
        }
        rows.put(rs.getString(1), values);
      }
    } catch (SQLException e) {
      throw new IllegalStateException("cannot run " + sql, e);
    }
    return rows;
  }

  /** The rows of a query of two text columns: a key and its value. */
  public Map<String, String> texts(String sql) {
    Map<String, String> rows = new HashMap<>();
    try (Connection c = connect();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      while (rs.next()) {
        rows.put(rs.getString(1), rs.getString(2));
      }
    } catch (SQLException e) {
      throw new IllegalStateException("cannot run " + sql, e);
    }
    return rows;
  }

  /** Empties every Tally table, keeping the schema. */
  /** The password of every login user {@link #loginWith} makes. */
  public static final String LOGIN_PASSWORD = "login-password-for-tests";

  /**
   * A login user granted {@code role}, one of the least-privilege roles the migrations make ({@code
   * tally_redirect_web}, {@code tally_click_job}, {@code tally_reconcile}), so that a test runs a
   * deployable with no more rights than in production; made once, named after the role. Its
   * password is {@link #LOGIN_PASSWORD}.
   */
  public String loginWith(String role) {
    if (!role.matches("tally_[a-z_]+")) {
      throw new IllegalArgumentException("not one of the migrations' roles: " + role);
    }
    String login = role + "_login";
    try (Connection c = connect();
        Statement s = c.createStatement()) {
      s.execute(
          "DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '"
              + login
              + "') THEN CREATE ROLE "
              + login
              + " LOGIN PASSWORD '"
              + LOGIN_PASSWORD
              + "' IN ROLE "
              + role
              + "; END IF; END $$");
    } catch (SQLException e) {
      throw new IllegalStateException("cannot make a login with " + role, e);
    }
    return login;
  }

  public void truncateAll() {
    try (Connection c = connect();
        Statement s = c.createStatement()) {
      s.execute(
          "DO $$ DECLARE t text; BEGIN FOR t IN SELECT tablename FROM pg_tables WHERE schemaname ="
              + " 'public' AND tablename <> 'flyway_schema_history' LOOP EXECUTE 'TRUNCATE ' ||"
              + " quote_ident(t) || ' CASCADE'; END LOOP; END $$");
    } catch (SQLException e) {
      throw new IllegalStateException("cannot truncate tables", e);
    }
  }

  /**
   * A new, empty database of the given name on the same server (dropped first if it exists), for a
   * test that needs a schema of its own: an older version to migrate from, or data no other test
   * should see. Returns its JDBC URL; nothing is migrated.
   */
  public String createDatabase(String name) {
    if (!name.matches("[a-z][a-z0-9_]{0,62}")) {
      throw new IllegalArgumentException("not a plain database name: " + name);
    }
    try (Connection c = connect();
        Statement s = c.createStatement()) {
      s.execute("DROP DATABASE IF EXISTS " + name);
      s.execute("CREATE DATABASE " + name);
    } catch (SQLException e) {
      throw new IllegalStateException("cannot create database " + name, e);
    }
    return "jdbc:postgresql://localhost:" + server.port() + "/" + name;
  }

  private record CloseableServer(EmbeddedPostgresServer server)
      implements ExtensionContext.Store.CloseableResource {
    @Override
    public void close() {
      server.close();
    }
  }
}
