package io.tally.counting;

import io.tally.event.KafkaSecurity;
import java.io.Serializable;
import java.util.Properties;
import org.apache.flink.connector.jdbc.JdbcConnectionOptions;
import picocli.CommandLine.Help;
import picocli.CommandLine.Option;

/**
 * Where Kafka and PostgreSQL are and how to reach them: the flags every Tally job shares, mixed
 * into each job's options. Passwords may come from the environment instead of the command line,
 * which anyone on the machine can read.
 */
public final class ConnectionOptions implements Serializable {

  @Option(names = "--bootstrap-servers", description = "Kafka bootstrap servers")
  String bootstrapServers = "localhost:9092";

  @Option(
      names = "--kafka-security-protocol",
      description = "PLAINTEXT (default), SSL, SASL_PLAINTEXT or SASL_SSL")
  String kafkaSecurityProtocol = "";

  @Option(
      names = "--kafka-sasl-mechanism",
      description = "PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 (default with SASL)")
  String kafkaSaslMechanism = "";

  @Option(names = "--kafka-sasl-username", description = "Kafka SASL user")
  String kafkaSaslUsername = "";

  @Option(
      names = "--kafka-sasl-password",
      description = "Kafka SASL password (or set TALLY_KAFKA_SASL_PASSWORD)",
      defaultValue = "${env:TALLY_KAFKA_SASL_PASSWORD}",
      // --help would print the variable's value.
      showDefaultValue = Help.Visibility.NEVER)
  String kafkaSaslPassword = "";

  @Option(
      names = "--kafka-truststore",
      description = "truststore (PKCS12, or JKS by its .jks name) with the Kafka brokers' CA")
  String kafkaTruststore = "";

  @Option(
      names = "--kafka-truststore-password",
      description = "the truststore's password (or set TALLY_KAFKA_TRUSTSTORE_PASSWORD)",
      defaultValue = "${env:TALLY_KAFKA_TRUSTSTORE_PASSWORD}",
      // --help would print the variable's value.
      showDefaultValue = Help.Visibility.NEVER)
  String kafkaTruststorePassword = "";

  @Option(names = "--jdbc-url", description = "PostgreSQL JDBC URL")
  String jdbcUrl = "jdbc:postgresql://localhost:5432/postgres";

  @Option(names = "--jdbc-user", description = "PostgreSQL user")
  String jdbcUser = "postgres";

  @Option(
      names = "--jdbc-password",
      description = "PostgreSQL password (or set TALLY_PG_PASSWORD)",
      defaultValue = "${env:TALLY_PG_PASSWORD}",
      // --help would print the variable's value.
      showDefaultValue = Help.Visibility.NEVER)
  String jdbcPassword = "";

  public String bootstrapServers() {
    return bootstrapServers;
  }

  /**
   * How the job's Kafka clients authenticate and encrypt.
   *
   * @throws IllegalArgumentException naming the setting that is wrong or missing
   */
  public KafkaSecurity kafkaSecurity() {
    return KafkaSecurity.of(
        kafkaSecurityProtocol,
        kafkaSaslMechanism,
        kafkaSaslUsername,
        kafkaSaslPassword,
        kafkaTruststore,
        kafkaTruststorePassword);
  }

  /** The settings every Kafka client of the job starts from: the brokers and their security. */
  public Properties kafkaClientProperties() {
    Properties p = new Properties();
    p.put("bootstrap.servers", bootstrapServers);
    p.putAll(kafkaSecurity().clientProperties());
    return p;
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
