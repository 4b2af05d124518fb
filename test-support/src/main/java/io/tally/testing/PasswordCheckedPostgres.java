package io.tally.testing;

import io.tally.embedded.EmbeddedPostgresServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

/**
 * Makes an embedded PostgreSQL check passwords on its network connections, as a production server
 * does (it trusts every login by default), so that a wrong password in a deployment file fails.
 */
public final class PasswordCheckedPostgres {

  private PasswordCheckedPostgres() {}

  /** Gives the owner {@code ownerPassword} and turns trust into SCRAM password checks. */
  public static void require(EmbeddedPostgresServer postgres, String ownerPassword) {
    try (Connection c =
            DriverManager.getConnection(postgres.jdbcUrl(), EmbeddedPostgresServer.USER, "");
        Statement s = c.createStatement()) {
      s.execute("ALTER ROLE postgres PASSWORD '" + ownerPassword.replace("'", "''") + "'");
      Path hba = postgres.dataDir().resolve("pg_hba.conf");
      List<String> lines = new ArrayList<>();
      for (String line : Files.readAllLines(hba)) {
        lines.add(line.startsWith("host") ? line.replaceAll("trust\\s*$", "scram-sha-256") : line);
      }
      Files.write(hba, lines);
      s.execute("SELECT pg_reload_conf()");
    } catch (SQLException e) {
      throw new IllegalStateException("cannot require passwords", e);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
