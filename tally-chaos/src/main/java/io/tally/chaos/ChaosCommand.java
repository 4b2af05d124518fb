package io.tally.chaos;

import io.tally.counting.Durations;
import io.tally.testing.Machine;
import io.tally.testing.Table;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code ./tally chaos [SCENARIO...] [--small]}: runs each fault scenario on a stack of its own,
 * with a click stream or redirects whose truth is known, and prints one table of what was sent,
 * answered, dropped, dead-lettered and counted, with PASS or FAIL per scenario; exits non-zero on
 * any FAIL.
 */
@Command(
    name = "tally chaos",
    mixinStandardHelpOptions = true,
    showDefaultValues = true,
    description =
        "Fault scenarios with ground truth, each on its own embedded stack; see"
            + " docs/reliability.md.")
public final class ChaosCommand implements Callable<Integer> {

  @Parameters(
      paramLabel = "SCENARIO",
      arity = "0..*",
      completionCandidates = ScenarioNames.class,
      description = "scenarios to run: ${COMPLETION-CANDIDATES}")
  List<String> scenarios = new ArrayList<>(List.of("all"));

  /** The scenarios' names as the catalogue holds them, and {@code all}. */
  static final class ScenarioNames implements Iterable<String> {
    @Override
    public Iterator<String> iterator() {
      return Stream.concat(catalogue().keySet().stream(), Stream.of("all")).iterator();
    }
  }

  @Option(
      names = "--small",
      description = "small volumes and short outages (as the ITCases run them)")
  boolean small;

  @Option(
      names = "--work-dir",
      description =
          "where the stacks keep their data (default: $TALLY_CHAOS_DIR or"
              + " tally-chaos/target/chaos-work)")
  Path workDir;

  @Option(
      names = "--postgres-outage",
      paramLabel = "DURATION",
      description =
          "how long postgres-down pauses PostgreSQL: 90s, 10m or ISO-8601 (default: 10m, 15s with"
              + " --small)")
  String postgresOutage;

  @Option(names = "--keep", description = "keep each scenario's data folder afterwards")
  boolean keep;

  public static void main(String[] args) {
    CommandLine cli = new CommandLine(new ChaosCommand());
    cli.setExecutionExceptionHandler(
        (e, commandLine, parseResult) -> {
          e.printStackTrace(commandLine.getErr());
          commandLine.getErr().println("tally chaos: " + e);
          return 2;
        });
    System.exit(cli.execute(args));
  }

  /** Every scenario, in the order. */
  public static Map<String, Scenario> catalogue() {
    Map<String, Scenario> all = new LinkedHashMap<>();
    for (Scenario s :
        List.of(
            new JobKillsScenario(),
            new BrokerDownScenario(),
            new PostgresDownScenario(),
            new ReplaysScenario(),
            new PoisonScenario(),
            new LateClicksScenario(),
            new SlowDatabaseScenario(),
            new SkewedClocksScenario(),
            new StatsOverloadScenario(),
            new ReferrerFloodScenario(),
            new AbuseScenario(),
            new LifecycleScenario(),
            new FairShareScenario(),
            new BrokerKillScenario(),
            new DatabaseFailoverScenario(),
            new TaskManagerKillScenario())) {
      all.put(s.name(), s);
    }
    return all;
  }

  @Override
  public Integer call() throws Exception {
    Map<String, Scenario> catalogue = catalogue();
    List<Scenario> chosen = new ArrayList<>();
    for (String name : scenarios) {
      if (name.equals("all")) {
        chosen.addAll(catalogue.values());
      } else if (catalogue.containsKey(name)) {
        chosen.add(catalogue.get(name));
      } else {
        String known = String.join(", ", catalogue.keySet()) + ", all";
        String message = "unknown scenario '" + name + "'; known: " + known;
        throw new CommandLine.ParameterException(new CommandLine(this), message);
      }
    }
    ChaosSettings settings = small ? ChaosSettings.small() : ChaosSettings.full();
    settings =
        settings.with(
            postgresOutage == null ? settings.postgresOutage() : Durations.parse(postgresOutage),
            keep);
    PrintStream out = System.out;
    String command = "tally chaos " + String.join(" ", scenarios) + (small ? " --small" : "");
    out.println(command + " — " + Machine.describe());
    String home = System.getenv().getOrDefault("TALLY_CHAOS_DIR", "tally-chaos/target/chaos-work");
    String run =
        "run-" + LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss"));
    Path base = (workDir != null ? workDir : Path.of(home)).toAbsolutePath().resolve(run);
    List<Outcome> outcomes = new ArrayList<>();
    for (Scenario scenario : chosen) {
      out.println("\n" + scenario.title() + " ...");
      long start = System.nanoTime();
      Outcome outcome =
          run(scenario, Files.createDirectories(base).resolve(scenario.name()), settings);
      outcomes.add(outcome);
      for (Outcome.Check c : outcome.checks()) {
        out.println("  " + (c.passed() ? "ok   " : "FAIL ") + c.claim() + ": " + c.detail());
      }
      outcome.notes().forEach(n -> out.println("  note " + n));
      String result = outcome.passed() ? "PASS" : "FAIL";
      out.printf(Locale.ROOT, "  %s in %.0f s%n", result, (System.nanoTime() - start) / 1e9);
    }
    table(outcomes).print(out);
    return outcomes.stream().allMatch(Outcome::passed) ? 0 : 1;
  }

  /**
   * Runs one scenario on a fresh stack under {@code dir}; an exception is a failed check, not the
   * end of the run.
   */
  public static Outcome run(Scenario scenario, Path dir, ChaosSettings settings) {
    try (ChaosStack stack = ChaosStack.start(dir, settings, scenario.topology())) {
      return scenario.run(stack);
    } catch (Exception | AssertionError e) {
      return new Outcome(scenario.name()).check("ran to the end", false, e.toString());
    }
  }

  /** The one table: a row per scenario, the columns the issue lists. */
  static Table table(List<Outcome> outcomes) {
    Table t =
        new Table(
            "tally chaos",
            "scenario",
            "clicks sent",
            "redirects by status",
            "producer sent = delivered + dropped",
            "drift (all tables)",
            "DLQ by reason",
            "job restarts",
            "recovery",
            "result");
    for (Outcome o : outcomes) {
      t.row(
          o.scenario,
          Table.count(o.clicksSent),
          join(o.redirects),
          producer(o),
          o.drift == null ? "–" : Table.count(Drift.total(o.drift)),
          join(o.deadLetters),
          o.restarts,
          o.recovery == null ? "–" : seconds(o.recovery),
          o.passed() ? "PASS" : "FAIL");
    }
    return t;
  }

  private static String producer(Outcome o) {
    if (o.producerSent == null) {
      return "–";
    }
    return Table.count(o.producerSent)
        + " = "
        + Table.count(o.producerDelivered)
        + " + "
        + Table.count(o.dropped.values().stream().mapToLong(Long::longValue).sum())
        + (o.dropped.isEmpty() ? "" : " (" + join(o.dropped) + ")");
  }

  private static String join(Map<?, Long> counts) {
    if (counts.isEmpty()) {
      return "–";
    }
    return counts.entrySet().stream()
        .map(e -> e.getKey() + " " + Table.count(e.getValue()))
        .collect(Collectors.joining(", "));
  }

  private static String seconds(Duration d) {
    return String.format(Locale.ROOT, "%.1f s", d.toMillis() / 1000.0);
  }
}
