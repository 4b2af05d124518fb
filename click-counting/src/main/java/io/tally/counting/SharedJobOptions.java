package io.tally.counting;

import java.io.Serializable;
import java.time.Duration;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/**
 * The options the click job and reconcile both take, written once: where Kafka and PostgreSQL are
 * ({@link ConnectionOptions}), how clicks are counted ({@link CountingOptions}), the click topic,
 * the allowed lateness and the parallelism. Each job's options extend it with their own.
 */
public abstract class SharedJobOptions implements Serializable {

  @CommandLine.Mixin protected ConnectionOptions connection = new ConnectionOptions();

  @CommandLine.Mixin protected CountingOptions counting = new CountingOptions();

  @Option(names = "--topic", description = "the click topic, the raw log both jobs read")
  protected String topic = "clicks";

  @Option(
      names = "--allowed-lateness",
      description =
          "how long after its period ends a late click still counts; reconcile takes the click"
              + " job's, to judge which periods are closed",
      converter = Durations.Converter.class)
  protected Duration allowedLateness = Duration.ofMinutes(5);

  @Option(names = "--parallelism", description = "job parallelism; the cluster's default when 0")
  protected int parallelism = 0;

  public ConnectionOptions connection() {
    return connection;
  }

  public CountingOptions counting() {
    return counting;
  }

  public String bootstrapServers() {
    return connection.bootstrapServers();
  }

  public String jdbcUrl() {
    return connection.jdbcUrl();
  }

  public String jdbcUser() {
    return connection.jdbcUser();
  }

  public String jdbcPassword() {
    return connection.jdbcPassword();
  }

  public String topic() {
    return topic;
  }

  public Duration allowedLateness() {
    return allowedLateness;
  }

  public int parallelism() {
    return parallelism;
  }
}
