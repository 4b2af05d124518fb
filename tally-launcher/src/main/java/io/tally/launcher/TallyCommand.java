package io.tally.launcher;

import io.tally.embedded.EmbeddedPostgresServer;
import io.tally.embedded.Ports;
import io.tally.local.ClickTopics;
import io.tally.local.FlinkCommandFailure;
import io.tally.local.FlinkRest;
import io.tally.local.LocalReconcile;
import io.tally.local.LocalServices;
import io.tally.local.RestEndpoint;
import io.tally.local.flink.FlinkCli;
import io.tally.local.flink.FlinkConf;
import io.tally.local.flink.FlinkInstall;
import io.tally.local.flink.StandaloneFlinkCluster;
import io.tally.reconcile.ReconcileOptions;
import io.tally.reconcile.ReconcileReport;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** The {@code ./tally} command: runs the local stack and reads its counts. */
@Command(
    name = "tally",
    mixinStandardHelpOptions = true,
    description = "Tally: click counting off the redirect path, on one machine.",
    subcommands = {
      TallyCommand.Up.class,
      TallyCommand.Counts.class,
      TallyCommand.Reconcile.class,
      KeyCommand.class,
      FlinkCommand.class,
      CommandLine.HelpCommand.class
    },
    footer = {
      "",
      "Environment (counts, reconcile and flink take what this shell does not set from",
      "the running ./tally up, which leaves it in .tally/running.env):",
      "  TALLY_HOME           data folder (default ./.tally)",
      "  TALLY_HTTP_PORT      redirect-web port (default 8080)",
      "  TALLY_FLINK_UI_PORT  Flink web UI port (default 8081)",
      "  TALLY_KAFKA_PORT     Kafka broker port (default 9092)",
      "  TALLY_PG_PORT        embedded PostgreSQL port (default 5432)",
      "  TALLY_FLINK_METRICS_PORTS",
      "                       ports Flink's Prometheus reporter may take, the first",
      "                       free one (default 9250-9260)",
      "  TALLY_PG_URL         an external PostgreSQL (JDBC URL) instead of the embedded",
      "  TALLY_PG_USER        user for TALLY_PG_URL (default postgres)",
      "  TALLY_PG_PASSWORD    password for TALLY_PG_URL",
      "  TALLY_API_KEY        API key for the links API (default: made once, kept in",
      "                       TALLY_HOME/api-key; a read-only key is kept beside it",
      "                       in TALLY_HOME/read-api-key)",
      "  TALLY_FLINK_PROPERTIES  'key: value' lines in place of the shipped Flink",
      "                       config.yaml's (up --cluster)",
      "  TALLY_BIND           the address redirect-web listens on (default 127.0.0.1:",
      "                       this machine only; 0.0.0.0 for every interface)",
      "  TALLY_JAVA_OPTS      options of this JVM (default -Xmx3g",
      "                       -XX:ParallelGCThreads=<half the cores>)",
      "  TALLY_WEB_JAVA_OPTS  options of redirect-web's JVM (default "
          + RedirectWebProcess.DEFAULT_JAVA_OPTS
          + ")",
      "  redirect-web's own settings are passed on to it: TALLY_PUBLIC_URL,",
      "  TALLY_ADMIN_PORT, TALLY_TRUSTED_PROXIES, TALLY_COUNTRY_HEADER, TALLY_GEOIP_DB,",
      "  TALLY_REDIS_URL, TALLY_IPV6_CLIENT_PREFIX, TALLY_BURST_CLICKS_PER_MINUTE,",
      "  every TALLY_LIMIT_*, TALLY_KAFKA_*,",
      "  TALLY_LINK_*, TALLY_PG_LOOKUP_TIMEOUT_MS, TALLY_STATS_*, TALLY_RANGE_VISITORS,",
      "  TALLY_MINUTE_RETENTION_DAYS (README, \"redirect-web configuration\")",
      "",
      "Examples:",
      "  ./tally up",
      "  ./tally up --cluster  Flink as a standalone cluster (1 JobManager,",
      "                       2 TaskManagers), the job submitted with Flink's CLI",
      "  ./tally counts Xy7abc12",
      "  ./tally key          the links API key (--read-only: the read-only one)",
      "  ./tally reconcile --from 2h --to now --dry-run",
      "  ./tally reconcile --cluster --from 2h --to now   the same on that cluster",
      "  ./tally flink list | savepoint | stop   the click job on a Flink cluster",
      "  ./tally flink run --from-savepoint PATH --parallelism 2",
      "                       (each takes --rest HOST:PORT; default the local one)",
      "  ./tally test         the whole test suite, installing what it needs first",
      "  ./tally bench all    benchmarks (redirect, pipeline, reconcile, broker-down,",
      "                       stats; ./tally bench --help, docs/benchmarks.md)",
      "  ./tally bench bots | uniques   the classifier on real corpora, the visitor",
      "                       sketches in memory (not in bench all)",
      "  ./tally chaos all    fault scenarios with ground truth, PASS/FAIL each",
      "                       (./tally chaos --help, docs/reliability.md)"
    })
public final class TallyCommand {

  private static final Logger LOG = LoggerFactory.getLogger(TallyCommand.class);

  public static void main(String[] args) {
    int exit = commandLine().execute(args);
    if (exit != 0 || args.length == 0 || !args[0].equals("up")) {
      System.exit(exit);
    }
  }

  /**
   * The command line with its error handling: one line per failure on stderr, and an exit status.
   */
  static CommandLine commandLine() {
    CommandLine cli = new CommandLine(new TallyCommand());
    cli.setExecutionExceptionHandler(
        (e, commandLine, parseResult) -> {
          LOG.debug("{} failed", parseResult.originalArgs(), e);
          commandLine.getErr().println("tally: " + rootMessage(e));
          return e instanceof Ports.PortInUseException ? 3 : 1;
        });
    return cli;
  }

  private static String rootMessage(Throwable e) {
    Throwable t = e;
    while (t.getCause() != null
        && !(t instanceof Ports.PortInUseException)
        && !(t instanceof FlinkCommandFailure)) {
      t = t.getCause();
    }
    return t.getMessage() == null ? t.toString() : t.getMessage();
  }

  /**
   * The JDBC URL of the local stack's PostgreSQL: {@code TALLY_PG_URL}, or the embedded server's
   * port.
   */
  static String defaultJdbcUrl(StackSettings settings) {
    return settings
        .externalPgUrl()
        .orElse("jdbc:postgresql://localhost:" + settings.pgPort() + "/postgres");
  }

  /** {@code ./tally up}: starts everything and runs until Ctrl-C. */
  @Command(
      name = "up",
      description =
          "Start Kafka, PostgreSQL, the Flink click job and redirect-web; Ctrl-C stops them.")
  static final class Up implements Callable<Integer> {
    @CommandLine.Option(
        names = "--cluster",
        description =
            "run Tally as a cluster on this machine: Flink as a standalone session cluster of"
                + " separate JVMs (1 JobManager, 2 TaskManagers) with the click job submitted by"
                + " Flink's CLI, Kafka as --brokers nodes in JVMs of their own (topics with up to 3"
                + " replicas, 2 in sync with 3 or more), and PostgreSQL as a primary with a hot"
                + " standby; its Kafka"
                + " and PostgreSQL data are kept apart from the single ones'")
    boolean cluster;

    @CommandLine.Option(
        names = "--brokers",
        defaultValue = "3",
        description =
            "with --cluster: Kafka nodes, on TALLY_KAFKA_PORT and the ports after it (default"
                + " ${DEFAULT-VALUE})")
    int brokers;

    @CommandLine.Option(
        names = "--allow-non-restored-state",
        description =
            "resume from the newest checkpoint even though it holds state of operators this version"
                + " does not have, dropping that state: once, when upgrading across a state layout"
                + " change (the job then recounts the open day; docs/operations.md)")
    boolean allowNonRestoredState;

    @Override
    public Integer call() throws Exception {
      PrintStream out = System.out;
      StackSettings settings = StackSettings.fromEnv(System.getenv());
      out.println(
          "Starting Tally in "
              + settings.home()
              + (cluster ? " on a standalone Flink cluster" : "")
              + " ...");
      long starting = System.nanoTime();
      LocalStack stack =
          cluster
              ? LocalStack.startOnCluster(
                  settings,
                  new LocalStack.ClusterMode(
                      FlinkInstall.fromSystemProperties(),
                      2,
                      FlinkConf.parseProperties(System.getenv(FlinkConf.PROPERTIES_ENV)),
                      new LocalServices.Topology(brokers, true)),
                  allowNonRestoredState)
              : LocalStack.start(settings, allowNonRestoredState);
      settings.leaveIn(StackSettings.RUNNING);
      CountDownLatch stopped = new CountDownLatch(1);
      Runtime.getRuntime()
          .addShutdownHook(
              new Thread(
                  () -> {
                    System.out.println("Stopping Tally ...");
                    try {
                      settings.takeBackFrom(StackSettings.RUNNING);
                    } catch (IOException e) {
                      LOG.warn("could not remove {}: {}", StackSettings.RUNNING, e.getMessage());
                    }
                    stack.close();
                    System.out.println("Stopped.");
                    stopped.countDown();
                  },
                  "tally-shutdown"));
      out.printf("Tally is up. Started in %.0f s.%n", (System.nanoTime() - starting) / 1e9);
      out.printf(
          "  redirect-web  %s   (API key: %s; read-only key: %s)%n",
          stack.redirectUrl(), stack.apiKey(), stack.readApiKey());
      out.printf(
          "  Flink web UI  %s   (job %s, %s)%n",
          stack.flinkUiUrl(),
          stack.clickJobId(),
          stack.resumedFrom().map(p -> "resumed from " + p).orElse("fresh start"));
      if (cluster) {
        out.printf(
            "  Flink         standalone: 1 JobManager, %d TaskManagers (logs in %s)%n",
            StandaloneFlinkCluster.TASK_MANAGERS, settings.logs());
      }
      String reporters =
          cluster
              ? "Prometheus, one port of " + stack.flinkMetricsPorts() + " per Flink process"
              : "Prometheus";
      out.printf(
          "  Flink metrics %s%n",
          stack
              .flinkMetricsUrl()
              .map(
                  url ->
                      url
                          + "   ("
                          + reporters
                          + "; redirect-web's: "
                          + stack.redirectUrl()
                          + "/metrics)")
              .orElse(
                  "not serving: no reporter answered on "
                      + stack.flinkMetricsPorts()
                      + " (see the log)"));
      out.printf(
          "  Kafka         %s   (topics %s, %s)%n",
          stack.kafkaBootstrap(), ClickTopics.CLICKS, ClickTopics.DEAD_LETTERS);
      out.printf("  PostgreSQL    %s%n", stack.psqlUrl());
      out.printf("  data          %s%n", settings.home());
      out.println(
          "Try: curl -s -X POST "
              + stack.redirectUrl()
              + "/api/links -H 'Authorization: Bearer "
              + stack.apiKey()
              + "' -d '{\"url\":\"https://example.com\"}'");
      out.println("Press Ctrl-C to stop.");
      stopped.await();
      return 0;
    }
  }

  /**
   * {@code ./tally reconcile --from … --to …}: recounts a range from the raw log of the running
   * stack, on a MiniCluster of its own so it never waits for the slots the streaming job holds, or
   * with {@code --cluster} on a Flink session cluster, submitted with Flink's CLI once a slot is
   * free there; exits with {@link ReconcileReport#EXIT_REFUSED} when the run refused to repair.
   */
  @Command(
      name = "reconcile",
      description =
          "Recount a time range from the click topic and repair drift in the counts (./tally"
              + " reconcile --help).")
  static final class Reconcile implements Callable<Integer> {
    @CommandLine.Option(
        names = "--cluster",
        description =
            "run the recount on a Flink session cluster (./tally up --cluster's, or --rest's) with"
                + " Flink's CLI")
    boolean cluster;

    @CommandLine.Option(
        names = "--rest",
        paramLabel = "HOST:PORT",
        description =
            "with --cluster: the cluster's REST API (default localhost:TALLY_FLINK_UI_PORT)")
    String rest;

    @CommandLine.Unmatched List<String> args = new ArrayList<>();

    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
      StackSettings settings = StackSettings.beside(System.getenv(), StackSettings.RUNNING);
      Map<String, String> stack = new LinkedHashMap<>();
      stack.put("--bootstrap-servers", "localhost:" + settings.kafkaPort());
      stack.put("--jdbc-url", defaultJdbcUrl(settings));
      stack.put("--jdbc-user", settings.pgUser());
      if (args.contains("-h") || args.contains("--help")) {
        usage(spec, stack, spec.commandLine().getOut());
        return 0;
      }
      List<String> defaults = new ArrayList<>();
      stack.forEach(
          (name, value) -> {
            defaults.add(name);
            defaults.add(value);
          });
      defaults.add("--jdbc-password");
      defaults.add(settings.pgPassword());
      List<String> flags = JobFlags.withDefaults(args, defaults);
      ReconcileOptions options = ReconcileOptions.parse(flags.toArray(String[]::new));
      if (options == null) {
        return 0;
      }
      requireReachable(options);
      if (cluster) {
        return runOnCluster(
            settings,
            rest == null ? RestEndpoint.local(settings.flinkUiPort()) : RestEndpoint.parse(rest),
            flags);
      }
      ReconcileReport report = LocalReconcile.run(options, settings.tmp());
      System.out.print(report.summary());
      // A refused run changed nothing: a non-zero status, so a schedule or script notices.
      return report.exitStatus();
    }

    /**
     * The recount's flags as this command takes them: under its name, with its own options, and
     * with the running stack's Kafka and PostgreSQL as defaults, which it passes on.
     */
    static void usage(
        CommandLine.Model.CommandSpec own, Map<String, String> stack, java.io.PrintWriter out) {
      CommandLine help =
          new CommandLine(new ReconcileOptions())
              .setCommandName("tally reconcile")
              .setDefaultValueProvider(
                  arg ->
                      arg instanceof CommandLine.Model.OptionSpec option
                          ? stack.get(option.longestName())
                          : null);
      for (CommandLine.Model.OptionSpec option : own.options()) {
        help.getCommandSpec().addOption(CommandLine.Model.OptionSpec.builder(option).build());
      }
      help.usage(out);
    }

    /**
     * A BATCH job on a session cluster whose slots the streaming job holds would wait for one
     * without a word (until the slot request times out): with no free slot, fail now and say why.
     */
    private static int runOnCluster(
        StackSettings settings, RestEndpoint endpoint, List<String> flags) {
      try (FlinkRest flink = FlinkRest.connect(endpoint)) {
        var overview = flink.overview();
        if (overview.getNumSlotsAvailable() < 1) {
          throw new IllegalStateException(
              "no free task slot on the Flink cluster at "
                  + endpoint
                  + " (all "
                  + overview.getNumSlotsTotal()
                  + " taken, by the click job or another run): the recount would wait for one. Run"
                  + " it when a slot is free, rescale the click job to fewer, or leave out"
                  + " --cluster to recount in a Flink of its own");
        }
      }
      FlinkInstall install = FlinkInstall.fromSystemProperties();
      FlinkCli cli =
          new FlinkCli(install, endpoint, settings.home().resolve("flink").resolve("cli"));
      int exit =
          cli.runAttached(
              new FlinkCli.Submission(install.reconcileJobJar(), flags, Optional.empty(), false));
      if (exit != 0 && exit != ReconcileReport.EXIT_REFUSED) {
        throw new IllegalStateException(
            "the recount failed on the Flink cluster at "
                + endpoint
                + ": "
                + cli.attachedFailure());
      }
      return exit;
    }

    private static void requireReachable(ReconcileOptions options) {
      try (Connection c =
          DriverManager.getConnection(
              options.jdbcUrl(), options.jdbcUser(), options.jdbcPassword())) {
        c.isValid(2);
      } catch (SQLException e) {
        throw new IllegalStateException(
            "cannot reach PostgreSQL at "
                + options.jdbcUrl()
                + "; is ./tally up running? ("
                + e.getMessage()
                + ")");
      }
      Properties kafka = options.connection().kafkaClientProperties();
      kafka.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 5000);
      kafka.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 3000);
      try (Admin admin = Admin.create(kafka)) {
        admin.describeCluster().nodes().get(6, TimeUnit.SECONDS);
      } catch (Exception e) {
        throw new IllegalStateException(
            "cannot reach Kafka at " + options.bootstrapServers() + "; is ./tally up running?");
      }
    }
  }

  /** {@code ./tally counts CODE}: one link's per-minute counts. */
  @Command(
      name = "counts",
      description =
          "Print a link's clicks per minute (minute, human clicks, bot clicks) and the total.")
  static final class Counts implements Callable<Integer> {
    @Parameters(paramLabel = "CODE", description = "the link code")
    String code;

    @Override
    public Integer call() throws Exception {
      StackSettings settings = StackSettings.beside(System.getenv(), StackSettings.RUNNING);
      // A running stack's server is found by its data folder, whatever port this shell's settings
      // name.
      Optional<Integer> running =
          settings.externalPgUrl().isPresent()
              ? Optional.empty()
              : EmbeddedPostgresServer.runningPort(settings.pgData());
      String url =
          settings
              .externalPgUrl()
              .orElse(
                  "jdbc:postgresql://localhost:" + running.orElse(settings.pgPort()) + "/postgres");
      try (Connection c =
          DriverManager.getConnection(url, settings.pgUser(), settings.pgPassword())) {
        CountsReport.print(c, code, System.out);
        return 0;
      } catch (SQLException notRunning) {
        if (settings.externalPgUrl().isPresent()
            || running.isPresent()
            || !Files.isDirectory(settings.pgData())) {
          throw new IllegalStateException(
              "cannot reach PostgreSQL at " + url + ": " + notRunning.getMessage());
        }
      }
      // The stack is down: open its database briefly to read the counts it kept.
      try (EmbeddedPostgresServer pg =
              EmbeddedPostgresServer.start(
                  settings.pgData(), 0, EmbeddedPostgresServer.Durability.DURABLE);
          Connection c =
              DriverManager.getConnection(pg.jdbcUrl(), settings.pgUser(), settings.pgPassword())) {
        CountsReport.print(c, code, System.out);
        return 0;
      }
    }
  }
}
