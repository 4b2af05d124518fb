package io.tally.bench;

import io.tally.bench.bots.BotClassificationBenchmark;
import io.tally.bench.brokers.BrokerCostBenchmark;
import io.tally.bench.pipeline.PipelineBenchmark;
import io.tally.bench.redirect.BrokerDownBenchmark;
import io.tally.bench.redirect.RedirectBenchmark;
import io.tally.bench.redirect.StackRedirectBenchmark;
import io.tally.bench.stats.StatsBenchmark;
import io.tally.bench.stats.StatsCostCurve;
import io.tally.bench.support.BenchmarkCommand;
import io.tally.bench.support.Report;
import io.tally.bench.uniques.UniquesBenchmark;
import io.tally.counting.Durations;
import io.tally.local.LocalClickJob;
import io.tally.local.LocalServices;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ScopeType;
import picocli.CommandLine.Spec;

/**
 * {@code ./tally bench <redirect|pipeline|reconcile|broker-down|stats|all|bots|uniques>}:
 * benchmarks that start the embedded stack in a folder of their own, warm up, measure, print a
 * table per benchmark and, at the very end, one {@code RATIO <what> <metric> <value>} line per
 * ratio. They are a command, never unit tests. {@code bots} needs no stack: it measures the bot
 * classifier on corpora fetched from npm, and {@code uniques} runs the visitor sketches in memory.
 */
@Command(
    name = "tally bench",
    // Inherited by every subcommand, so that each declares only its name and description.
    scope = ScopeType.INHERIT,
    mixinStandardHelpOptions = true,
    showDefaultValues = true,
    description =
        "Benchmarks on the embedded stack (durable PostgreSQL, Kafka broker, Flink MiniCluster);"
            + " see docs/benchmarks.md.",
    subcommands = {
      BenchCommand.Redirect.class,
      BenchCommand.Pipeline.class,
      BenchCommand.Reconcile.class,
      BenchCommand.BrokerDown.class,
      BenchCommand.Stats.class,
      BenchCommand.Brokers.class,
      BenchCommand.Stack.class,
      BenchCommand.All.class,
      BotClassificationBenchmark.class,
      UniquesBenchmark.class,
      CommandLine.HelpCommand.class
    })
public final class BenchCommand {

  public static void main(String[] args) {
    CommandLine cli = new CommandLine(new BenchCommand());
    cli.registerConverter(Duration.class, new Durations.Converter());
    cli.setExecutionExceptionHandler(
        (e, commandLine, parseResult) -> {
          e.printStackTrace(commandLine.getErr());
          commandLine.getErr().println("tally bench: " + e);
          return 1;
        });
    System.exit(cli.execute(args));
  }

  /** Options every benchmark takes. */
  static final class Common {
    @Option(
        names = "--work-dir",
        description =
            "where the stack keeps its data during the run (default: $TALLY_BENCH_DIR or"
                + " tally-bench/target/bench-work)")
    Path workDir;

    @Option(names = "--keep", description = "keep the run's data folder afterwards")
    boolean keep;

    @Option(
        names = "--seed",
        description = "seed of every generated workload and data set",
        defaultValue = "20261129")
    long seed;

    Path runDir() throws IOException {
      Path base =
          workDir != null
              ? workDir
              : Path.of(
                  System.getenv().getOrDefault("TALLY_BENCH_DIR", "tally-bench/target/bench-work"));
      Path dir =
          base.toAbsolutePath()
              .resolve(
                  "run-"
                      + LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")));
      Files.createDirectories(dir);
      return dir;
    }
  }

  /** Options of {@code bench redirect}. */
  static final class RedirectOptions {
    @Option(
        names = "--connections",
        split = ",",
        description = "concurrency levels (connections)",
        defaultValue = "4,16,64")
    List<Integer> connections;

    @Option(names = "--duration", description = "measured time per cell", defaultValue = "10s")
    Duration duration;

    @Option(
        names = "--cell-warmup",
        description = "unmeasured load before each cell",
        defaultValue = "2s")
    Duration cellWarmup;

    @Option(
        names = "--warmup",
        description = "warm-up at start, spread over every mode and workload",
        defaultValue = "18s")
    Duration warmup;

    @Option(names = "--links", description = "links in the Zipf workload", defaultValue = "1000")
    int links;

    @Option(
        names = "--zipf",
        description = "Zipf exponent of the spread workload",
        defaultValue = "1.0")
    double zipf;

    @Option(
        names = "--fixed-rates",
        split = ",",
        description =
            "offered loads (req/s) of the open-loop cells, each"
                + " run in every mode with latency from each request's due time; 0 skips them",
        defaultValue = "500,2000")
    List<Integer> fixedRates;

    @Option(
        names = "--fixed-rate-connections",
        description = "connections of the open-loop cells",
        defaultValue = "16")
    int fixedRateConnections;

    @Option(
        names = "--flood-rate",
        description =
            "distinct unknown codes per second of the flood cell, from one client; 0 skips it",
        defaultValue = "1000")
    int floodRate;

    @Option(
        names = "--sized-codes",
        description =
            "codes the in-memory set of codes is sized and filled for, to report its"
                + " bytes per code and false positives",
        defaultValue = "10000000")
    long sizedCodes;

    RedirectBenchmark.Settings settings(long seed) {
      return new RedirectBenchmark.Settings(
          connections,
          duration,
          cellWarmup,
          warmup,
          links,
          zipf,
          seed,
          fixedRates.stream().filter(rate -> rate > 0).toList(),
          fixedRateConnections,
          floodRate,
          sizedCodes);
    }
  }

  /** Options of the data set that {@code bench pipeline} and {@code bench reconcile} preload. */
  static final class DataOptions {
    @Option(
        names = "--events",
        description =
            "click events to preload (duplicates included): with 5%% duplicates the"
                + " default leaves 10 M click ids to remember",
        defaultValue = "10500000")
    int events;

    @Option(
        names = "--codes",
        description = "links the clicks are spread over (Zipf)",
        defaultValue = "10000")
    int codes;

    @Option(
        names = "--duplicates",
        description = "share of events that repeat an earlier click id",
        defaultValue = "0.05")
    double duplicates;

    @Option(
        names = "--span",
        description = "event-time span of the data, ending 10 minutes ago",
        defaultValue = "60m")
    Duration span;

    @Option(
        names = "--hot-events",
        description =
            "events of the hot workload (every click on one link), run after the Zipf one; 0 skips"
                + " it",
        defaultValue = "3000000")
    int hotEvents;

    @Option(
        names = "--agent-events",
        description =
            "events of the agents cell: the Zipf workload with its few agents, then the same with"
                + " each click's agent never seen before, each read to half; 0 skips it",
        defaultValue = "1000000")
    int agentEvents;

    @Option(
        names = "--also-parallelism",
        split = ",",
        description =
            "parallelisms to run the Zipf topic at too, for the"
                + " throughput curve (each stops halfway through the topic); 0 for none",
        defaultValue = "1")
    List<Integer> alsoParallelism;

    @Option(
        names = "--raw-runs",
        description = "runs of the plain consumer; the best is the ceiling",
        defaultValue = "2")
    int rawRuns;

    @Option(names = "--parallelism", description = "Flink parallelism", defaultValue = "2")
    int parallelism;

    @Option(
        names = "--idle-timeout",
        description = "the click job's --idle-timeout (its default is 20s)",
        defaultValue = "20s")
    Duration idleTimeout;

    @Option(
        names = "--lag",
        description =
            "after the backlog, send live clicks this long and time each minute's count (0s skips)",
        defaultValue = "130s")
    Duration lag;

    @Option(
        names = "--managed-memory",
        description =
            "Flink managed memory of the MiniCluster's TaskManager (RocksDB, batch sorting);"
                + " a MiniCluster's own default is 128m",
        defaultValue = LocalClickJob.MANAGED_MEMORY)
    String managedMemory;

    @Option(
        names = "--flink-conf",
        paramLabel = "KEY=VALUE",
        description =
            "extra Flink setting for the streaming and reconcile jobs, on top of their own"
                + " (repeatable), e.g. state.backend.rocksdb.use-bloom-filter=true")
    Map<String, String> flinkConf = new LinkedHashMap<>();

    PipelineBenchmark.Settings settings(long seed) {
      Map<String, String> conf = new LinkedHashMap<>();
      conf.put("taskmanager.memory.managed.size", managedMemory);
      conf.putAll(flinkConf);
      return new PipelineBenchmark.Settings(
          events,
          codes,
          duplicates,
          span,
          rawRuns,
          parallelism,
          idleTimeout,
          lag,
          Map.copyOf(conf),
          seed,
          hotEvents,
          agentEvents,
          alsoParallelism.stream().filter(p -> p > 0 && p != parallelism).toList());
    }
  }

  /** Options of {@code bench stats}. */
  static final class StatsOptions {
    @Option(names = "--stats-links", description = "links seeded", defaultValue = "1000")
    int links;

    @Option(names = "--stats-days", description = "days of clicks seeded", defaultValue = "90")
    int days;

    @Option(
        names = "--hottest",
        description = "clicks an hour of the busiest link (link i gets about hottest / i)",
        defaultValue = "120")
    int hottest;

    @Option(
        names = "--busiest",
        description = "the timed reads pick among this many busiest links",
        defaultValue = "20")
    int busiest;

    @Option(
        names = "--requests",
        description = "timed read pairs (API and raw)",
        defaultValue = "300")
    int requests;

    @Option(
        names = "--curve-days",
        split = ",",
        description = "sizes of the cost curve, in days of buckets;" + " 0 skips the curve",
        defaultValue = "7,30,90,365")
    List<Integer> curveDays;

    @Option(
        names = "--curve-links",
        description = "links in the cost curve, each with every hour of every day",
        defaultValue = "50")
    int curveLinks;

    @Option(
        names = "--curve-requests",
        description = "timed reads of each query at each size of the curve",
        defaultValue = "60")
    int curveRequests;

    StatsBenchmark.Settings settings(long seed) {
      return new StatsBenchmark.Settings(links, days, hottest, busiest, 30, requests, seed);
    }

    /**
     * Runs the buckets-against-raw comparison, then the cost curve (which empties the bucket tables
     * first).
     */
    void run(LocalServices stack, Report report, PrintStream out, long seed) throws Exception {
      new StatsBenchmark(stack, settings(seed), out).run(report);
      List<Integer> sizes = curveDays.stream().filter(d -> d > 0).sorted().toList();
      if (!sizes.isEmpty()) {
        new StatsCostCurve(
                stack, new StatsCostCurve.Settings(sizes, curveLinks, curveRequests, seed), out)
            .run(report);
      }
    }
  }

  /** Options of {@code bench broker-down}. */
  static final class OutageOptions {
    @Option(
        names = "--outage-connections",
        description = "connections during the broker-down run",
        defaultValue = "16")
    int connections;

    @Option(
        names = "--phase",
        description = "length of each phase: before, broker down, after the restart",
        defaultValue = "10s")
    Duration phase;

    BrokerDownBenchmark.Settings settings(long seed, int links) {
      return new BrokerDownBenchmark.Settings(connections, phase, links, seed);
    }
  }

  /** A benchmark on a stack of its own, started for it in a fresh folder and stopped after it. */
  abstract static class Run extends BenchmarkCommand {
    @Mixin Common common;

    abstract void run(LocalServices stack, Report report, PrintStream out) throws Exception;

    /** How many brokers and databases the stack runs: by default the embedded single stack. */
    LocalServices.Topology topology() {
      return LocalServices.Topology.SINGLE;
    }

    @Override
    protected void run(Report report, PrintStream out) throws Exception {
      try (LocalServices stack =
          LocalServices.start(
              LocalServices.Spec.scratch(common.runDir(), common.keep, topology()))) {
        out.println("PostgreSQL: " + stack.pgSettings() + "; data in " + stack.dir());
        run(stack, report, out);
      }
    }
  }

  @Command(
      name = "redirect",
      description =
          "redirect-web in counting modes off, async and sync, side by side: throughput and"
              + " latency.")
  static final class Redirect extends Run {
    @Mixin RedirectOptions options;

    @Override
    void run(LocalServices stack, Report report, PrintStream out) throws Exception {
      new RedirectBenchmark(stack, options.settings(common.seed), out).run(report);
    }
  }

  @Command(
      name = "pipeline",
      description =
          "The streaming click job on preloaded clicks against a plain Kafka consumer (the"
              + " ceiling).")
  static final class Pipeline extends Run {
    @Mixin DataOptions data;

    @Option(
        names = "--against",
        paramLabel = "REF",
        description =
            "instead, run this build's click job and that git ref's (built once into"
                + " target/against/) alternately on the topic, A B B A, and print the ratio")
    String against;

    @Spec CommandSpec spec;

    private int rounds = 1;

    @Option(
        names = "--rounds",
        paramLabel = "N",
        description =
            "with --against, how many times to run A B B A (default 1): the mean ratio steadies"
                + " with more rounds, at about 4 minutes a run")
    void rounds(int rounds) {
      if (rounds < 1) {
        throw new CommandLine.ParameterException(
            spec.commandLine(), "--rounds must be at least 1, not " + rounds);
      }
      this.rounds = rounds;
    }

    @Override
    void run(LocalServices stack, Report report, PrintStream out) throws Exception {
      PipelineBenchmark bench =
          PipelineBenchmark.prepared(stack, data.settings(common.seed), out, report);
      if (against == null) {
        bench.streamingJob();
      } else {
        bench.against(against, rounds);
      }
    }
  }

  @Command(
      name = "reconcile",
      description =
          "batch-reconcile's replay rate over preloaded clicks against a plain Kafka consumer.")
  static final class Reconcile extends Run {
    @Mixin DataOptions data;

    @Override
    void run(LocalServices stack, Report report, PrintStream out) throws Exception {
      PipelineBenchmark bench =
          PipelineBenchmark.prepared(stack, data.settings(common.seed), out, report);
      bench.reconcile();
    }
  }

  @Command(
      name = "broker-down",
      description =
          "redirect-web (async) while the Kafka broker is stopped and restarted: throughput, p99,"
              + " drops.")
  static final class BrokerDown extends Run {
    @Mixin OutageOptions outage;

    @Override
    void run(LocalServices stack, Report report, PrintStream out) throws Exception {
      new BrokerDownBenchmark(stack, outage.settings(common.seed, 1000), out).run(report);
    }
  }

  @Command(
      name = "stats",
      description =
          "The stats API on 90 days of buckets against the same clicks read raw: p99 of a chart and"
              + " a breakdown; then the queries' p99 against days of data held (7, 30, 90, 365).")
  static final class Stats extends Run {
    @Mixin StatsOptions options;

    @Override
    void run(LocalServices stack, Report report, PrintStream out) throws Exception {
      options.run(stack, report, out, common.seed);
    }
  }

  @Command(
      name = "brokers",
      description =
          "Broker CPU and disk per click on a cluster of KRaft nodes in processes of their own:"
              + " one replica against three (min.insync.replicas 2), A B B A after a warm-up.")
  static final class Brokers extends Run {
    @Spec CommandSpec spec;

    @Option(
        names = "--brokers",
        description = "nodes in the cluster, 3 or more",
        defaultValue = "3")
    int brokers;

    @Option(names = "--events", description = "clicks sent in each phase", defaultValue = "600000")
    int events;

    @Option(
        names = "--rate",
        description = "clicks per second offered in each phase",
        defaultValue = "20000")
    int rate;

    @Option(
        names = "--codes",
        description = "links the clicks are spread over (Zipf)",
        defaultValue = "10000")
    int codes;

    @Override
    LocalServices.Topology topology() {
      if (brokers < 3 || events < 1 || rate < 1 || codes < 1) {
        throw new CommandLine.ParameterException(
            spec.commandLine(),
            "--brokers must be 3 or more; --events, --rate and --codes positive");
      }
      return new LocalServices.Topology(brokers, false);
    }

    @Override
    void run(LocalServices stack, Report report, PrintStream out) throws Exception {
      new BrokerCostBenchmark(
              stack.kafkaCluster().orElseThrow(),
              new BrokerCostBenchmark.Settings(events, rate, codes, common.seed),
              out)
          .run(report);
    }
  }

  @Command(
      name = "stack",
      description =
          "Redirects on the whole ./tally up stack, offered at a fixed rate from outside its"
              + " processes: p99 and how long the JVM that answers stood still.")
  static final class Stack extends BenchmarkCommand {
    @Spec CommandSpec spec;
    @Mixin Common common;

    @Option(names = "--rate", description = "requests per second offered", defaultValue = "1000")
    int rate;

    @Option(names = "--connections", description = "keep-alive connections", defaultValue = "16")
    int connections;

    @Option(
        names = "--warmup",
        description = "load before each cell, not recorded",
        defaultValue = "20s")
    Duration warmup;

    @Option(names = "--duration", description = "measured time per cell", defaultValue = "30s")
    Duration duration;

    @Option(
        names = "--links",
        description = "counted links, created through the API",
        defaultValue = "200")
    int links;

    @Option(
        names = "--variant",
        paramLabel = "NAME=VALUE",
        description =
            "a setting of ./tally up to start this build's stack with, such as"
                + " TALLY_WEB_JAVA_OPTS=-Xmx512m; repeat to compare several, each started twice (in"
                + " order, then reversed)")
    List<String> variants = List.of();

    @Option(
        names = "--against",
        paramLabel = "REF",
        description =
            "also start that git ref's ./tally up (built once into target/against/), A B B A, and"
                + " print the ratio")
    String against;

    @Override
    protected void run(Report report, PrintStream out) throws Exception {
      if (variants.stream().anyMatch(v -> !v.matches("TALLY_\\w+=.*"))) {
        throw new CommandLine.ParameterException(
            spec.commandLine(), "--variant takes NAME=VALUE with a TALLY_ name: " + variants);
      }
      new StackRedirectBenchmark(
              new StackRedirectBenchmark.Settings(
                  rate,
                  connections,
                  warmup,
                  duration,
                  links,
                  common.seed,
                  common.runDir(),
                  common.keep,
                  variants,
                  Optional.ofNullable(against)),
              out)
          .run(report);
    }
  }

  @Command(
      name = "all",
      description =
          "redirect, pipeline, reconcile, broker-down and stats on one stack, in that order.")
  static final class All extends Run {
    @Mixin RedirectOptions redirect;
    @Mixin DataOptions data;
    @Mixin OutageOptions outage;
    @Mixin StatsOptions stats;

    @Override
    void run(LocalServices stack, Report report, PrintStream out) throws Exception {
      new RedirectBenchmark(stack, redirect.settings(common.seed), out).run(report);
      PipelineBenchmark pipeline =
          PipelineBenchmark.prepared(stack, data.settings(common.seed), out, report);
      pipeline.streamingJob();
      pipeline.reconcile();
      new BrokerDownBenchmark(stack, outage.settings(common.seed, redirect.links), out).run(report);
      stats.run(stack, report, out, common.seed);
    }
  }
}
