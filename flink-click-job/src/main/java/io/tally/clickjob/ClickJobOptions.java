package io.tally.clickjob;

import io.tally.counting.Durations;
import io.tally.counting.SharedJobOptions;
import io.tally.counting.functions.MarkNewVisitors;
import java.time.Duration;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The click-count job's settings, parsed once from command-line flags; {@code --help} lists them
 * with their defaults. Durations take ISO-8601 ({@code PT30S}) or short forms ({@code 30s}, {@code
 * 5m}, {@code 24h}).
 */
@Command(
    name = "flink-click-job",
    mixinStandardHelpOptions = true,
    description = "Counts clicks per link and minute from the click topic into PostgreSQL.",
    showDefaultValues = true)
public final class ClickJobOptions extends SharedJobOptions {

  @Option(names = "--dlq-topic", description = "dead-letter topic for malformed and late records")
  String dlqTopic = "clicks-dlq";

  @Option(
      names = "--group-id",
      description = "Kafka consumer group (offsets are committed on checkpoints)")
  String groupId = "flink-click-job";

  @Option(
      names = "--early-firing-interval",
      description = "how often an open minute with new clicks writes its partial totals",
      converter = Durations.Converter.class)
  Duration earlyFiringInterval = Duration.ofSeconds(2);

  @Option(
      names = "--out-of-orderness",
      description = "how far out of order clicks may arrive",
      converter = Durations.Converter.class)
  Duration outOfOrderness = Duration.ofSeconds(5);

  @Option(
      names = "--idle-timeout",
      description = "quiet time after which a partition's watermark follows the wall clock",
      converter = Durations.Converter.class)
  Duration idleTimeout = Duration.ofSeconds(20);

  @Option(
      names = "--dedup-ttl",
      description = "how long a click id is remembered for dropping duplicates",
      converter = Durations.Converter.class)
  Duration dedupTtl = Duration.ofHours(24);

  @Option(
      names = "--state-ttl",
      description =
          "how long of the job's running time a link's open periods and a visitor's day are"
              + " remembered after their last change; more than a day and the allowed lateness",
      converter = Durations.Converter.class)
  Duration stateTtl = MarkNewVisitors.LIVE_TTL;

  @Option(
      names = "--checkpoint-interval",
      description = "checkpoint interval",
      converter = Durations.Converter.class)
  Duration checkpointInterval = Duration.ofSeconds(10);

  @Option(
      names = "--checkpoint-dir",
      description =
          "checkpoint directory URI, e.g. file:///var/tally/checkpoints; the cluster's setting when"
              + " empty")
  String checkpointDir = "";

  @Option(names = "--sink-batch-size", description = "rows per JDBC batch")
  int sinkBatchSize = 5000;

  @Option(
      names = "--sink-flush-interval",
      description = "longest time a row waits in the JDBC batch",
      converter = Durations.Converter.class)
  Duration sinkFlushInterval = Duration.ofSeconds(1);

  /**
   * Parses flags; returns null after printing help or version, throws with a usage message on bad
   * flags.
   */
  public static ClickJobOptions parse(String... args) {
    ClickJobOptions options = new ClickJobOptions();
    CommandLine cli = new CommandLine(options);
    CommandLine.ParseResult result = cli.parseArgs(args);
    if (CommandLine.printHelpIfRequested(result)) {
      return null;
    }
    return options;
  }

  public String dlqTopic() {
    return dlqTopic;
  }

  public String groupId() {
    return groupId;
  }

  public Duration earlyFiringInterval() {
    return earlyFiringInterval;
  }

  public Duration outOfOrderness() {
    return outOfOrderness;
  }

  public Duration idleTimeout() {
    return idleTimeout;
  }

  public Duration dedupTtl() {
    return dedupTtl;
  }

  public Duration stateTtl() {
    return stateTtl;
  }

  public Duration checkpointInterval() {
    return checkpointInterval;
  }

  public String checkpointDir() {
    return checkpointDir;
  }

  public int sinkBatchSize() {
    return sinkBatchSize;
  }

  public Duration sinkFlushInterval() {
    return sinkFlushInterval;
  }
}
