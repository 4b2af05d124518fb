package io.tally.launcher;

import io.tally.clickjob.ClickCountJob;
import io.tally.clickjob.ClickJobOptions;
import io.tally.embedded.EmbeddedKafkaBroker;
import io.tally.embedded.EmbeddedPostgresServer;
import io.tally.embedded.EmbeddedPostgresServer.Durability;
import io.tally.embedded.KafkaBrokerCluster;
import io.tally.embedded.Ports;
import io.tally.embedded.ReplicatedPostgres;
import io.tally.local.Checkpoints;
import io.tally.local.FlinkRest;
import io.tally.local.LocalClickJob;
import io.tally.local.LocalServices;
import io.tally.local.Teardown;
import io.tally.local.flink.FlinkCli;
import io.tally.local.flink.FlinkConf;
import io.tally.local.flink.FlinkInstall;
import io.tally.local.flink.StandaloneFlinkCluster;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import org.apache.flink.api.common.JobID;

/**
 * The whole of Tally on one machine: PostgreSQL (embedded unless {@code TALLY_PG_URL} is set), a
 * KRaft Kafka broker, the click-count job with Flink's web UI and Prometheus reporter, and
 * redirect-web. The job runs in a Flink MiniCluster inside this JVM, or (with a {@link
 * ClusterMode}) on a standalone Flink cluster of separate JVMs, submitted with Flink's CLI;
 * redirect-web always runs in a JVM of its own ({@link RedirectWebProcess}), as in production.
 * Everything keeps its data under the home folder; closing stops it all in reverse order, the job
 * cancelled with its checkpoints retained, so the next start resumes from them.
 */
public final class LocalStack implements AutoCloseable {

  private static final String REPORTER_PORT = "metrics.reporter.prom.port";

  /**
   * The click job on a standalone Flink cluster rather than a MiniCluster.
   *
   * @param install Flink's jars and the job jar
   * @param clickJobParallelism the click job's parallelism (at most 2 leaves slots to a reconcile
   *     run)
   * @param flinkProperties settings in place of the shipped config.yaml's ({@value
   *     FlinkConf#PROPERTIES_ENV})
   * @param topology Kafka's and PostgreSQL's: one of each, or three brokers and a standby, whose
   *     data is kept apart from the single ones'
   */
  public record ClusterMode(
      FlinkInstall install,
      int clickJobParallelism,
      Map<String, String> flinkProperties,
      LocalServices.Topology topology) {}

  private final StackSettings settings;
  private final Optional<ClusterMode> clusterMode;
  private StandaloneFlinkCluster cluster;
  private final boolean allowNonRestoredState;
  private final Teardown teardown = new Teardown();
  private LocalServices services;
  private String clickJobId;
  private Optional<Path> resumedFrom = Optional.empty();
  private int flinkUiPort;
  private PortRange flinkMetricsPorts;

  /**
   * What Flink's reporters were given, {@link #REPORTER_PORT}'s value: the range, or a cluster's
   * override.
   */
  private String reporterPorts;

  private OptionalInt flinkMetricsPort = OptionalInt.empty();
  private RedirectWebProcess web;
  private String apiKey;
  private String readApiKey;

  private LocalStack(
      StackSettings settings, Optional<ClusterMode> clusterMode, boolean allowNonRestoredState) {
    this.settings = settings;
    this.clusterMode = clusterMode;
    this.allowNonRestoredState = allowNonRestoredState;
  }

  /**
   * Starts every service, the click job in a MiniCluster; on any failure stops what had started and
   * rethrows.
   */
  public static LocalStack start(StackSettings settings) throws Exception {
    return start(settings, Optional.empty(), false);
  }

  /**
   * As {@link #start(StackSettings)}; with {@code allowNonRestoredState} the job resumes from a
   * checkpoint even when it holds state of operators the job no longer has, which is dropped
   * ({@link UnclaimedState}).
   */
  public static LocalStack start(StackSettings settings, boolean allowNonRestoredState)
      throws Exception {
    return start(settings, Optional.empty(), allowNonRestoredState);
  }

  /**
   * Starts every service, the click job on a standalone Flink cluster; on failure stops what had
   * started.
   */
  public static LocalStack startOnCluster(
      StackSettings settings, ClusterMode mode, boolean allowNonRestoredState) throws Exception {
    return start(settings, Optional.of(mode), allowNonRestoredState);
  }

  private static LocalStack start(
      StackSettings settings, Optional<ClusterMode> clusterMode, boolean allowNonRestoredState)
      throws Exception {
    LocalStack stack = new LocalStack(settings, clusterMode, allowNonRestoredState);
    try {
      stack.startAll();
      return stack;
    } catch (Exception | Error e) {
      stack.close();
      throw e;
    }
  }

  private void startAll() throws Exception {
    Files.createDirectories(settings.home());
    // One that a killed launcher left may still hold redirect-web's port for a moment.
    RedirectWebProcess.stopOrphan(settings.home(), settings.logs());
    // A standalone cluster that a killed launcher left running holds the Flink UI's port: stop it
    // first.
    clusterMode.ifPresent(mode -> StandaloneFlinkCluster.stopOrphans(flinkConfDir()));
    LocalServices.Topology topology =
        clusterMode.map(ClusterMode::topology).orElse(LocalServices.Topology.SINGLE);
    Path pgData =
        topology.pgStandby() ? settings.home().resolve("postgres-replicated") : settings.pgData();
    Path kafkaData =
        topology.brokers() > 1 ? settings.home().resolve("kafka-cluster") : settings.kafkaData();
    // So do the Kafka nodes and PostgreSQL servers of a cluster, which hold their ports.
    if (topology.brokers() > 1) {
      KafkaBrokerCluster.stopOrphans(kafkaData);
    }
    // Check every fixed port first, so a taken one fails fast with its name before anything starts.
    int httpPort = Ports.requireFree(settings.httpPort(), "redirect-web", "TALLY_HTTP_PORT");
    flinkUiPort =
        Ports.requireFree(settings.flinkUiPort(), "the Flink web UI", "TALLY_FLINK_UI_PORT");
    Ports.requireFree(settings.kafkaPort(), "Kafka", "TALLY_KAFKA_PORT");
    flinkMetricsPorts = FlinkMetricsEndpoint.reporterPorts(settings.flinkMetricsPorts());
    if (settings.externalPgUrl().isEmpty()) {
      if (topology.pgStandby()) {
        ReplicatedPostgres.stopOrphans(pgData);
      } else {
        EmbeddedPostgresServer.stopOrphan(pgData);
      }
      Ports.requireFree(settings.pgPort(), "PostgreSQL", "TALLY_PG_PORT");
    }

    services =
        LocalServices.start(
            new LocalServices.Spec(
                pgData,
                settings.pgPort(),
                Durability.DURABLE,
                settings.externalPgUrl(),
                settings.pgUser(),
                settings.pgPassword(),
                kafkaData,
                settings.kafkaPort(),
                settings.home(),
                false,
                // ./tally up's shutdown hook closes the stack in order; a hook of PostgreSQL's own
                // would stop it under redirect-web while that is still closing.
                false,
                topology));
    teardown.add(services);
    services.createClickTopics();

    if (clusterMode.isPresent()) {
      startClickJobOnCluster(clusterMode.get());
    } else {
      startClickJob();
    }

    apiKey =
        settings.apiKey().orElseGet(() -> HomeSecrets.readOrCreate(settings.apiKeyFile(), "dev-"));
    Map<String, String> env = new HashMap<>(services.redirectWebEnv());
    env.put("TALLY_HTTP_PORT", String.valueOf(httpPort));
    readApiKey = HomeSecrets.readOrCreate(settings.readApiKeyFile(), "read-");
    env.put("TALLY_API_KEYS", "write:" + apiKey + ",read:" + readApiKey);
    env.put(
        "TALLY_IP_HASH_SECRET",
        HomeSecrets.readOrCreate(settings.home().resolve("ip-hash-secret"), ""));
    env.putAll(passedToRedirectWeb(System.getenv()));
    // Started once Kafka is ours and up, and ready once it knows the click topic: "up" should mean
    // that the first click is counted, not dropped for lack of metadata.
    web =
        RedirectWebProcess.start(
            env,
            settings.home(),
            settings.logs(),
            System.getenv()
                .getOrDefault(
                    RedirectWebProcess.JAVA_OPTS_ENV, RedirectWebProcess.DEFAULT_JAVA_OPTS));
    teardown.add(web);
    JobID job = JobID.fromHexString(clickJobId);
    flinkMetricsPort = FlinkMetricsEndpoint.find(reporterPorts, job, Duration.ofSeconds(60));
  }

  /**
   * redirect-web's settings that {@code ./tally up} does not set itself, passed through from its
   * environment: those named here and every rate limit ({@code TALLY_LIMIT_*}).
   */
  static final List<String> REDIRECT_WEB_SETTINGS =
      List.of(
          "TALLY_PUBLIC_URL",
          "TALLY_ADMIN_PORT",
          "TALLY_TRUSTED_PROXIES",
          "TALLY_COUNTRY_HEADER",
          "TALLY_GEOIP_DB",
          "TALLY_REDIS_URL",
          "TALLY_IPV6_CLIENT_PREFIX",
          "TALLY_BURST_CLICKS_PER_MINUTE",
          "TALLY_KAFKA_BUFFER_BYTES",
          "TALLY_KAFKA_MAX_BLOCK_MS",
          "TALLY_KAFKA_DELIVERY_TIMEOUT_MS",
          "TALLY_LINK_REFRESH_MS",
          "TALLY_LINK_STALE_LIMIT_MINUTES",
          "TALLY_PG_LOOKUP_TIMEOUT_MS",
          "TALLY_STATS_POOL_SIZE",
          "TALLY_STATS_CONCURRENCY_PER_KEY",
          "TALLY_STATS_STATEMENT_TIMEOUT_MS",
          "TALLY_RANGE_VISITORS",
          "TALLY_MINUTE_RETENTION_DAYS");

  /**
   * The entries of {@code environment} that go on to redirect-web ({@link #REDIRECT_WEB_SETTINGS}),
   * and the address it listens on: this machine only unless {@code TALLY_BIND} says otherwise,
   * since a stack for one machine should not answer its whole network by default.
   */
  static Map<String, String> passedToRedirectWeb(Map<String, String> environment) {
    Map<String, String> passed = new HashMap<>();
    passed.put("TALLY_BIND", environment.getOrDefault("TALLY_BIND", "127.0.0.1"));
    environment.forEach(
        (name, value) -> {
          if (REDIRECT_WEB_SETTINGS.contains(name) || name.startsWith("TALLY_LIMIT_")) {
            passed.put(name, value);
          }
        });
    return passed;
  }

  /**
   * The click job's flags for this stack's Kafka and PostgreSQL, as {@code flink run} would take
   * them.
   */
  static List<String> clickJobFlags(
      String bootstrapServers, String jdbcUrl, StackSettings settings) {
    return LocalServices.clickJobFlags(
        bootstrapServers, jdbcUrl, settings.pgUser(), settings.pgPassword());
  }

  /**
   * The newest retained checkpoint to resume from, after deleting the folders of older jobs.
   * Resuming restores the open periods, the dedup set and Kafka offsets together; offsets alone
   * would lose open minutes. A checkpoint with state the job would not take back is refused unless
   * that was allowed.
   */
  private Optional<Path> resumePoint(ClickJobOptions options) throws IOException {
    Optional<Path> latest = Checkpoints.latest(settings.checkpoints());
    if (latest.isPresent()) {
      UnclaimedState.check(latest.get(), options, allowNonRestoredState, settings.checkpoints());
    }
    Checkpoints.deleteAllJobsBut(settings.checkpoints(), latest);
    return latest;
  }

  private Path flinkConfDir() {
    return settings.home().resolve("flink").resolve("conf");
  }

  private void startClickJobOnCluster(ClusterMode mode) throws Exception {
    Path flinkHome = settings.home().resolve("flink");
    // The reporters of the cluster's processes take ports of the same range as the MiniCluster's
    // would.
    Map<String, String> properties = new HashMap<>(mode.flinkProperties());
    properties.putIfAbsent(REPORTER_PORT, flinkMetricsPorts.toString());
    reporterPorts = properties.get(REPORTER_PORT);
    Path confDir = FlinkConf.writeCluster(flinkConfDir(), settings.home(), flinkUiPort, properties);
    cluster = StandaloneFlinkCluster.start(mode.install(), confDir, settings.logs(), flinkUiPort);
    teardown.add(cluster);
    List<String> flags = new ArrayList<>(services.clickJobFlags());
    flags.addAll(List.of("--parallelism", String.valueOf(mode.clickJobParallelism())));
    resumedFrom = resumePoint(ClickJobOptions.parse(flags.toArray(String[]::new)));
    FlinkCli cli = new FlinkCli(mode.install(), cluster.endpoint(), flinkHome.resolve("cli"));
    clickJobId =
        cli.runDetached(
                new FlinkCli.Submission(
                    mode.install().clickJobJar(),
                    flags,
                    resumedFrom.map(p -> p.toUri().toString()),
                    allowNonRestoredState))
            .toHexString();
    teardown.add(this::cancelClickJobOnCluster);
  }

  private void cancelClickJobOnCluster() {
    // Whichever click job runs now (./tally flink run may have replaced the one started here);
    // cancelling keeps its retained checkpoints (RETAIN_ON_CANCELLATION), which the next start
    // resumes from.
    try (FlinkRest rest = FlinkRest.connect(cluster.endpoint())) {
      rest.activeJob(ClickCountJob.JOB_NAME).ifPresent(job -> rest.cancel(job.getJobId()));
    }
  }

  private void startClickJob() throws Exception {
    List<String> flags = new ArrayList<>(services.clickJobFlags());
    flags.addAll(
        List.of(
            "--checkpoint-dir", settings.checkpoints().toUri().toString(), "--parallelism", "2"));
    ClickJobOptions options = ClickJobOptions.parse(flags.toArray(String[]::new));
    resumedFrom = resumePoint(options);
    reporterPorts = flinkMetricsPorts.toString();
    // The same reporter a cluster's config.yaml names, so the dashboard and alerts work on either.
    // The MiniCluster finds the factory on the classpath, a cluster in its plugins folder.
    Map<String, String> reporter =
        Map.of(
            "metrics.reporter.prom.factory.class",
            FlinkMetricsEndpoint.REPORTER_FACTORY,
            REPORTER_PORT,
            reporterPorts);
    LocalClickJob job =
        LocalClickJob.start(
            options,
            LocalClickJob.Setup.of(flinkUiPort, settings.tmp())
                .restoringFrom(resumedFrom, allowNonRestoredState)
                .withFlinkConf(reporter));
    clickJobId = job.jobId();
    teardown.add(job);
  }

  public String redirectUrl() {
    return "http://localhost:" + web.port();
  }

  public String flinkUiUrl() {
    return "http://localhost:" + flinkUiPort;
  }

  /**
   * Where Flink's Prometheus reporter answers, empty when it did not start (its error is in the
   * log): the reporter listens on every interface, since Flink gives it no bind address.
   */
  public Optional<String> flinkMetricsUrl() {
    return flinkMetricsPort.isPresent()
        ? Optional.of(FlinkMetricsEndpoint.url(flinkMetricsPort.getAsInt()))
        : Optional.empty();
  }

  /** The ports the reporters were given, as Flink's option takes them. */
  public String flinkMetricsPorts() {
    return reporterPorts;
  }

  public String kafkaBootstrap() {
    return services.bootstrapServers();
  }

  public EmbeddedKafkaBroker kafka() {
    return services.kafka();
  }

  public String jdbcUrl() {
    return services.jdbcUrl();
  }

  public String psqlUrl() {
    return services.psqlUrl();
  }

  public String apiKey() {
    return apiKey;
  }

  /** A key that reads stats and lists but cannot create or disable links, kept in the home. */
  public String readApiKey() {
    return readApiKey;
  }

  /** The id of the click job this start submitted. */
  public String clickJobId() {
    return clickJobId;
  }

  /** The standalone Flink cluster, when the stack runs on one. */
  public Optional<StandaloneFlinkCluster> cluster() {
    return Optional.ofNullable(cluster);
  }

  public Optional<Path> resumedFrom() {
    return resumedFrom;
  }

  public StackSettings settings() {
    return settings;
  }

  @Override
  public void close() {
    teardown.close();
  }
}
