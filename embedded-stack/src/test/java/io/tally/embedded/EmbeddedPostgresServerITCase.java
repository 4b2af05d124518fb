package io.tally.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A data folder whose server is running belongs to the process that started it: a second start on
 * it (another {@code ./tally up}, or {@code ./tally counts} looking on the wrong port) fails with
 * the port to use instead of stopping the server under the running stack.
 */
class EmbeddedPostgresServerITCase {

  @TempDir Path home;

  @Test
  void aSecondStartOnADataFolderInUseFailsAndLeavesTheRunningServerAlone() throws Exception {
    Path data = home.resolve("postgres");
    try (EmbeddedPostgresServer running =
        EmbeddedPostgresServer.start(data, 0, EmbeddedPostgresServer.Durability.FAST)) {
      assertThat(EmbeddedPostgresServer.runningPort(data)).contains(running.port());

      assertThatThrownBy(
              () -> EmbeddedPostgresServer.start(data, 0, EmbeddedPostgresServer.Durability.FAST))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("port " + running.port());

      assertThat(answers(running.jdbcUrl())).isTrue();
    }
    assertThat(EmbeddedPostgresServer.runningPort(data)).isEmpty();
  }

  @Test
  void theSameFolderStartsAgainOnceItsServerIsClosed() throws Exception {
    Path data = home.resolve("postgres");
    EmbeddedPostgresServer.start(data, 0, EmbeddedPostgresServer.Durability.FAST).close();

    try (EmbeddedPostgresServer again =
        EmbeddedPostgresServer.start(data, 0, EmbeddedPostgresServer.Durability.FAST)) {
      assertThat(answers(again.jdbcUrl())).isTrue();
    }
  }

  private static boolean answers(String jdbcUrl) throws Exception {
    try (Connection c = DriverManager.getConnection(jdbcUrl, EmbeddedPostgresServer.USER, "");
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT 1")) {
      return rs.next();
    }
  }
}
