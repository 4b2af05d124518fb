package io.tally.redirect;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.testing.KafkaExtension;
import io.tally.testing.PostgresExtension;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Links made before a route took their code: the migration that reserved the app's paths finds them
 * and says what to do, each start of redirect-web warns of the enabled ones and counts them in a
 * gauge, and the link API refuses every code a route of the app answers.
 */
class ShadowedLinksITCase {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();
  @RegisterExtension static final KafkaExtension KAFKA = new KafkaExtension();

  @Test
  void linksWhoseCodeARouteAnswersAreFoundAtTheMigrationAndAtStartAndRefusedAfter()
      throws Exception {
    String jdbcUrl = databaseAtSchemaVersion6("shadowed_links_upgrade");
    try (Connection c = DriverManager.getConnection(jdbcUrl, PG.user(), PG.password());
        Statement s = c.createStatement()) {
      s.execute(
          "INSERT INTO links (code, url) VALUES ('dashboard', 'https://example.com/d'),"
              + " ('metrics', 'https://example.com/m'), ('dashboards', 'https://example.com/ds')");
      s.execute(
          "INSERT INTO links (code, url, disabled_at) VALUES ('health', 'https://example.com/h',"
              + " now())");
    }

    try (RunningRedirectWeb web =
        RunningRedirectWeb.start(
            RunningRedirectWeb.environment(
                jdbcUrl, PG.user(), PG.password(), KAFKA, KAFKA.newTopic("clicks-shadowed", 1)))) {
      assertThat(codes(jdbcUrl, "SELECT code FROM shadowed_links ORDER BY code"))
          .as("found by the migration, disabled ones left alone")
          .containsExactly("dashboard", "metrics");
      assertThat(web.metric("tally_links_shadowed"))
          .as("enabled links a route shadows, at start")
          .isEqualTo(2.0);
      assertThat(web.get("/dashboards").statusCode())
          .as("a code that only starts like a route")
          .isEqualTo(302);

      for (String route : List.of("api", "dashboard", "health", "metrics")) {
        HttpResponse<String> refused =
            web.post(
                "/api/links",
                "{\"url\":\"https://example.com/x\",\"code\":\"" + route + "\"}",
                "Authorization",
                "Bearer " + RunningRedirectWeb.API_KEY,
                "Content-Type",
                "application/json");
        assertThat(refused.statusCode()).as(route).isEqualTo(400);
        assertThat(RunningRedirectWeb.json(refused).get("error").asText())
            .isEqualTo("code '" + route + "' is reserved");
      }
    }
  }

  /**
   * A database of its own on the shared server, migrated only as far as the schema before shadowed
   * links.
   */
  private static String databaseAtSchemaVersion6(String name) {
    String jdbcUrl = PG.createDatabase(name);
    Flyway.configure()
        .dataSource(jdbcUrl, PG.user(), PG.password())
        .locations("classpath:db/migration")
        .target("6")
        .load()
        .migrate();
    return jdbcUrl;
  }

  private static List<String> codes(String jdbcUrl, String sql) throws Exception {
    List<String> codes = new ArrayList<>();
    try (Connection c = DriverManager.getConnection(jdbcUrl, PG.user(), PG.password());
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      while (rs.next()) {
        codes.add(rs.getString(1));
      }
    }
    return codes;
  }
}
