package io.tally.redirect;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.tally.testing.PostgresExtension;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * What the migrations' roles may not do. What each may do is what its deployable's own tests do
 * under it: redirect-web's ITCases, the click job's and reconcile's run as logins with their roles.
 */
class LeastPrivilegeRolesITCase {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "tally_redirect_web | INSERT INTO click_counts (code, minute, clicks) VALUES ('x',"
            + " '2026-01-01', 1)",
        "tally_redirect_web | UPDATE click_daily SET clicks = 0",
        "tally_redirect_web | INSERT INTO reconcile_runs (range_from, range_to) VALUES (now(),"
            + " now())",
        "tally_redirect_web | UPDATE link_ledger_hourly SET duplicates = 0",
        "tally_redirect_web | CREATE TABLE stolen (x INT)",
        "tally_redirect_web | DROP TABLE links",
        "tally_redirect_web | DELETE FROM links",
        "tally_redirect_web | SELECT * FROM flyway_schema_history",
        "tally_click_job | SELECT * FROM links",
        "tally_click_job | DELETE FROM click_counts",
        "tally_click_job | SELECT * FROM visitor_salts",
        "tally_click_job | CREATE TABLE stolen (x INT)",
        "tally_click_job | INSERT INTO click_send_drops (instance, minute, dropped) VALUES ('x',"
            + " '2026-01-01', 1)",
        "tally_reconcile | UPDATE links SET url = 'https://evil.example/'",
        "tally_reconcile | SELECT * FROM visitor_salts",
        "tally_reconcile | ALTER TABLE click_counts DROP CONSTRAINT click_counts_pkey"
      })
  void aRoleIsRefusedWhatItsDeployableNeverDoes(String role, String statement) throws SQLException {
    try (Connection c =
            DriverManager.getConnection(
                PG.jdbcUrl(), PG.loginWith(role), PostgresExtension.LOGIN_PASSWORD);
        Statement s = c.createStatement()) {
      Throwable thrown = catchThrowable(() -> s.execute(statement));

      assertThat(thrown).as(statement).isInstanceOf(SQLException.class);
      SQLException refused = (SQLException) thrown;
      // insufficient_privilege, or must be owner
      assertThat(refused.getSQLState()).as(refused.getMessage()).isEqualTo("42501");
    }
  }
}
