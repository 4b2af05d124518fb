package io.tally.schema;

import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.output.MigrateResult;

/** Applies the versioned migrations from {@code sql/} to a PostgreSQL database. */
public final class TallySchema {

  private TallySchema() {}

  /**
   * Brings the database at {@code jdbcUrl} up to the newest schema; safe to call on every start.
   */
  public static MigrateResult migrate(String jdbcUrl, String user, String password) {
    return Flyway.configure()
        .dataSource(jdbcUrl, user, password)
        .locations("classpath:db/migration")
        .load()
        .migrate();
  }
}
