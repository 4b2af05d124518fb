package io.tally.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A primary with a synchronous hot standby: what was committed on the primary is on the standby, a
 * client of the multi-host URL writes on after the primary is killed and the standby promoted, and
 * the next start seeds a new standby from the promoted primary.
 */
class ReplicatedPostgresITCase {

  @TempDir(cleanup = org.junit.jupiter.api.io.CleanupMode.ON_SUCCESS)
  Path dir;

  @Test
  void aKilledPrimaryLosesNoCommitAndTheUrlFollowsThePromotedStandby() throws Exception {
    String url;
    try (ReplicatedPostgres pair = ReplicatedPostgres.start(dir, 0, true)) {
      url = pair.jdbcUrl();
      execute(url, "CREATE TABLE clicks (id int PRIMARY KEY)");
      execute(url, "INSERT INTO clicks SELECT generate_series(1, 100)");
      String standbyUrl = pair.standby().orElseThrow().jdbcUrl();
      assertThat(count(standbyUrl)).as("committed on the standby too").isEqualTo(100);
      assertThat(bool(standbyUrl, "SELECT pg_is_in_recovery()")).isTrue();

      pair.killPrimary();
      pair.promoteStandby();
      await()
          .atMost(Duration.ofSeconds(30))
          .ignoreExceptions()
          .untilAsserted(() -> execute(url, "INSERT INTO clicks SELECT generate_series(101, 150)"));
      assertThat(count(url)).isEqualTo(150);
      assertThat(pair.standby()).isEmpty();
    }

    try (ReplicatedPostgres again = ReplicatedPostgres.start(dir, 0, true)) {
      execute(again.jdbcUrl(), "INSERT INTO clicks SELECT generate_series(151, 160)");
      assertThat(count(again.jdbcUrl())).isEqualTo(160);
      String standbyUrl = again.standby().orElseThrow().jdbcUrl();
      assertThat(count(standbyUrl)).as("the old primary, seeded afresh").isEqualTo(160);
    }
  }

  @Test
  void aStandbyPromotedByHandIsThePrimaryOfTheNextStart() throws Exception {
    try (ReplicatedPostgres pair = ReplicatedPostgres.start(dir, 0, true)) {
      String url = pair.jdbcUrl();
      execute(url, "CREATE TABLE clicks (id int PRIMARY KEY)");
      execute(url, "INSERT INTO clicks SELECT generate_series(1, 100)");
      pair.killPrimary();
      // As an operator would, without this class knowing.
      bool(pair.standby().orElseThrow().jdbcUrl(), "SELECT pg_promote(true, 60)");
      await()
          .atMost(Duration.ofSeconds(30))
          .ignoreExceptions()
          .untilAsserted(() -> execute(url, "INSERT INTO clicks SELECT generate_series(101, 120)"));
    }

    try (ReplicatedPostgres again = ReplicatedPostgres.start(dir, 0, true)) {
      assertThat(count(again.jdbcUrl()))
          .as("the promoted server's commits, not the old primary's folder")
          .isEqualTo(120);
      assertThat(count(again.standby().orElseThrow().jdbcUrl())).isEqualTo(120);
    }
  }

  private static void execute(String url, String sql) throws SQLException {
    try (Connection c = DriverManager.getConnection(url, EmbeddedPostgresServer.USER, "");
        Statement s = c.createStatement()) {
      s.execute(sql);
    }
  }

  private static long count(String url) throws SQLException {
    try (Connection c = DriverManager.getConnection(url, EmbeddedPostgresServer.USER, "");
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT count(*) FROM clicks")) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private static boolean bool(String url, String sql) throws SQLException {
    try (Connection c = DriverManager.getConnection(url, EmbeddedPostgresServer.USER, "");
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getBoolean(1);
    }
  }
}
