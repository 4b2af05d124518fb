package io.tally.reconcile;

import io.tally.counting.Durations;
import io.tally.counting.SharedJobOptions;
import io.tally.event.ClickEventCodec;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.Optional;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The reconcile job's settings, parsed once from flags; {@code --help} lists them with defaults.
 * Instants are ISO-8601 ({@code 2026-11-29T10:00:00Z}), {@code now}, or a duration meaning that
 * long ago ({@code 2h}, {@code 30m}, {@code 7d}).
 */
@Command(
    name = "batch-reconcile",
    mixinStandardHelpOptions = true,
    description =
        "Recount clicks from the raw click topic for a time range, report drift in the counts, and"
            + " repair it where the log still covers the range. On the command line, exits with 3"
            + " when it refuses to repair.",
    showDefaultValues = true)
public final class ReconcileOptions extends SharedJobOptions {

  @Option(
      names = "--from",
      required = true,
      description = "start of the range: ISO instant, 'now', or a duration ago like 2h")
  String from;

  @Option(
      names = "--to",
      description = "end of the range (exclusive): ISO instant, 'now', or a duration ago")
  String to = "now";

  @Option(names = "--dry-run", description = "report the drift but change nothing")
  boolean dryRun;

  @Option(
      names = "--horizon",
      description =
          "how long after a minute ends it counts as closed; default: allowed lateness + safety"
              + " margin",
      converter = Durations.Converter.class)
  Duration horizon;

  @Option(
      names = "--safety-margin",
      description = "extra wait beyond the lateness before a minute is touched",
      converter = Durations.Converter.class)
  Duration safetyMargin = Duration.ofMinutes(2);

  @Option(
      names = "--read-slack",
      description =
          "read this much before and after the range, for clicks stored out of order (before it,"
              + " at least an hour: a click may be stamped that far after its record)",
      converter = Durations.Converter.class)
  Duration readSlack = Duration.ofMinutes(10);

  @Option(names = "--repair-batch-size", description = "minutes repaired per transaction")
  int repairBatchSize = 1000;

  @Option(
      names = "--max-removed-share",
      description =
          "refuse a repair that would remove more than this share of the"
              + " stored clicks it checks in any table (0.05 = 5%%), unless --force")
  double maxRemovedShare = 0.05;

  @Option(
      names = "--force",
      description = "repair even when it removes more than --max-removed-share")
  boolean force;

  @Option(
      names = "--run-key",
      description =
          "names one intended run: started again under the same key, the run recounts the range the"
              + " key first resolved, or nothing once that run ended (default in application mode:"
              + " the Flink job id the Kubernetes operator fixes for the deployment)")
  String runKey;

  /** Parses flags; returns null after printing help or version. */
  public static ReconcileOptions parse(String... args) {
    ReconcileOptions options = new ReconcileOptions();
    CommandLine.ParseResult result = new CommandLine(options).parseArgs(args);
    if (CommandLine.printHelpIfRequested(result)) {
      return null;
    }
    if (!(options.maxRemovedShare >= 0 && options.maxRemovedShare <= 1)) {
      throw new CommandLine.ParameterException(
          result.commandSpec().commandLine(),
          "--max-removed-share must be between 0 and 1 (0.05 = 5%), not "
              + options.maxRemovedShare);
    }
    return options;
  }

  /**
   * The effective horizon: {@code --horizon}, or the streaming job's lateness plus the safety
   * margin.
   */
  public Duration horizon() {
    return horizon != null ? horizon : allowedLateness.plus(safetyMargin);
  }

  /**
   * Before when periods count as closed. With {@code --horizon}, that long before now. Without it,
   * also no later than where the streaming job has got ({@code streamClosedBefore}, its {@code
   * fresh_until}) less the lateness and the safety margin: a job that is behind has not written its
   * last totals for more recent periods, and repairing them would only have its later upserts raise
   * them again.
   */
  public Instant closedBefore(Instant now, Optional<Instant> streamClosedBefore) {
    Instant byClock = now.minus(horizon());
    if (horizon != null || streamClosedBefore.isEmpty()) {
      return byClock;
    }
    Instant byStream = streamClosedBefore.get().minus(allowedLateness.plus(safetyMargin));
    return byStream.isBefore(byClock) ? byStream : byClock;
  }

  public boolean dryRun() {
    return dryRun;
  }

  public Duration readSlack() {
    return readSlack;
  }

  /**
   * Where reading the topic starts for {@code range}, by record timestamp: the read slack before
   * it, and at least {@link ClickEventCodec#MAX_FUTURE_SKEW}, since a click is counted by its own
   * time, which may be that far ahead of its record's.
   */
  public Instant readFrom(TimeRange range) {
    Duration before =
        readSlack.compareTo(ClickEventCodec.MAX_FUTURE_SKEW) > 0
            ? readSlack
            : ClickEventCodec.MAX_FUTURE_SKEW;
    return range.from().minus(before);
  }

  public int repairBatchSize() {
    return repairBatchSize;
  }

  public double maxRemovedShare() {
    return maxRemovedShare;
  }

  public boolean force() {
    return force;
  }

  public Optional<String> runKey() {
    return Optional.ofNullable(runKey).filter(k -> !k.isBlank());
  }

  /** Takes {@code key} as the run key unless {@code --run-key} gave one. */
  void runKeyUnlessGiven(String key) {
    if (runKey().isEmpty()) {
      runKey = key;
    }
  }

  /** The range to reconcile, as whole minutes, resolved against {@code now}. */
  public TimeRange range(Instant now) {
    return TimeRange.ofMinutes(instant(from, now, "--from"), instant(to, now, "--to"));
  }

  static Instant instant(String text, Instant now, String flag) {
    String value = text.trim();
    if (value.equalsIgnoreCase("now")) {
      return now;
    }
    try {
      return Instant.parse(value);
    } catch (DateTimeParseException notInstant) {
      try {
        return OffsetDateTime.parse(value).toInstant();
      } catch (DateTimeParseException notOffset) {
        try {
          return now.minus(Durations.parse(value));
        } catch (IllegalArgumentException notDuration) {
          throw new IllegalArgumentException(
              flag
                  + " '"
                  + text
                  + "' is neither an ISO instant (2026-11-29T10:00:00Z), 'now', nor a duration ago"
                  + " (2h)");
        }
      }
    }
  }
}
