package io.tally.schema;

import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.output.MigrateResult;

/**
 * Applies the versioned migrations from {@code sql/} to a PostgreSQL database. {@link #main} runs
 * them as the schema's owner before deployables that connect with least-privilege roles start.
 */
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

  /**
   * Migrates the database of {@code TALLY_PG_URL} as {@code TALLY_PG_USER} (the schema's owner, who
   * needs CREATEROLE the first time) with {@code TALLY_PG_PASSWORD}; exits 1 when it cannot.
   */
  public static void main(String[] args) {
    String url = System.getenv("TALLY_PG_URL");
    if (url == null || url.isBlank()) {
      System.err.println("TALLY_PG_URL is required (a jdbc:postgresql:// URL)");
      System.exit(1);
    }
    String user = System.getenv().getOrDefault("TALLY_PG_USER", "postgres");
    String password = System.getenv().getOrDefault("TALLY_PG_PASSWORD", "");
    MigrateResult result = migrate(url, user, password);
    System.out.println(
        "schema of "
            + ConnectionUrls.redacted(url)
            + " at version "
            + result.targetSchemaVersion
            + " ("
            + result.migrationsExecuted
            + " migrations applied)");
  }
}
