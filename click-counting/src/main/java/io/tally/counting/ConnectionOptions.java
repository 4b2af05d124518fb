package io.tally.counting;

import java.io.Serializable;
import org.apache.flink.connector.jdbc.JdbcConnectionOptions;
import picocli.CommandLine.Option;

/**
 * Where Kafka and PostgreSQL are: the flags every Tally job shares, mixed into each job's options.
 */
public final class ConnectionOptions implements Serializable {

  @Option(names = "--bootstrap-servers", description = "Kafka bootstrap servers")
  String bootstrapServers = "localhost:9092";

  @Option(names = "--jdbc-url", description = "PostgreSQL JDBC URL")
  String jdbcUrl = "jdbc:postgresql://localhost:5432/postgres";

  @Option(names = "--jdbc-user", description = "PostgreSQL user")
  String jdbcUser = "postgres";

  @Option(
      names = "--jdbc-password",
      description = "PostgreSQL password (or set TALLY_PG_PASSWORD)",
      defaultValue = "${env:TALLY_PG_PASSWORD}")
  String jdbcPassword = "";

  public String bootstrapServers() {
    return bootstrapServers;
  }

  public String jdbcUrl() {
    return jdbcUrl;
  }

  public String jdbcUser() {
    return jdbcUser;
  }

  public String jdbcPassword() {
    return jdbcPassword == null ? "" : jdbcPassword;
  }

  /** The connection settings of the JDBC sinks. */
  public JdbcConnectionOptions jdbc() {
    return new JdbcConnectionOptions.JdbcConnectionOptionsBuilder()
        .withUrl(jdbcUrl)
        .withDriverName("org.postgresql.Driver")
        .withUsername(jdbcUser)
        .withPassword(jdbcPassword())
        .build();
  }
}
