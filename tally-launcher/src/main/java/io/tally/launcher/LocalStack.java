package io.tally.launcher;

import io.tally.clickjob.ClickCountJob;
import io.tally.clickjob.ClickJobOptions;
import io.tally.embedded.EmbeddedKafkaBroker;
import io.tally.embedded.EmbeddedPostgresServer;
import io.tally.embedded.Ports;
import io.tally.launcher.flink.FlinkCli;
import io.tally.launcher.flink.FlinkConf;
import io.tally.launcher.flink.FlinkInstall;
import io.tally.launcher.flink.FlinkRest;
import io.tally.launcher.flink.StandaloneFlinkCluster;
import io.tally.redirect.RedirectWebConfig;
import io.tally.redirect.RedirectWebServer;
import io.tally.schema.TallySchema;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.TimeUnit;
import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The whole of Tally on one machine: PostgreSQL (embedded unless {@code TALLY_PG_URL} is set), a KRaft
 * Kafka broker, the click-count job with Flink's web UI and Prometheus reporter, and redirect-web. The job runs in a Flink
 * MiniCluster inside this JVM, or (with a {@link ClusterMode}) on a standalone Flink cluster of separate
 * JVMs, submitted with Flink's CLI. Everything keeps its data under the home folder; closing stops it all
 * in reverse order, the job cancelled with its checkpoints retained, so the next start resumes from them.
 */
public final class LocalStack implements AutoCloseable {

  private static final String REPORTER_PORT = "metrics.reporter.prom.port";
  private static final Logger LOG = LoggerFactory.getLogger(LocalStack.class);

  /**
   * The click job on a standalone Flink cluster rather than a MiniCluster.
   *
   * @param install Flink's jars and the job jar
   * @param clickJobParallelism the click job's parallelism (at most 2 leaves slots to a reconcile run)
   * @param flinkProperties settings in place of the shipped config.yaml's ({@value FlinkConf#PROPERTIES_ENV})
   */
  public record ClusterMode(FlinkInstall install, int clickJobParallelism, Map<String, String> flinkProperties) {}

  private final StackSettings settings;
  private final Optional<ClusterMode> clusterMode;
  private StandaloneFlinkCluster cluster;
  private final boolean allowNonRestoredState;
  private final Deque<AutoCloseable> started = new ArrayDeque<>();
  private String jdbcUrl;
  private String psqlUrl;
  private EmbeddedKafkaBroker kafka;
  private String clickJobId;
  private Optional<Path> resumedFrom = Optional.empty();
  private int flinkUiPort;
  private PortRange flinkMetricsPorts;
  /** What Flink's reporters were given, {@link #REPORTER_PORT}'s value: the range, or a cluster's override. */
  private String reporterPorts;
  private OptionalInt flinkMetricsPort = OptionalInt.empty();
  private RedirectWebServer web;
  private String apiKey;

  private LocalStack(StackSettings settings, Optional<ClusterMode> clusterMode, boolean allowNonRestoredState) {
    this.settings = settings;
    this.clusterMode = clusterMode;
    this.allowNonRestoredState = allowNonRestoredState;
  }

  /** Starts every service, the click job in a MiniCluster; on any failure stops what had started and rethrows. */
  public static LocalStack start(StackSettings settings) throws Exception {
    return start(settings, Optional.empty(), false);
  }

  /**
   * As {@link #start(StackSettings)}; with {@code allowNonRestoredState} the job resumes from a checkpoint
   * even when it holds state of operators the job no longer has, which is dropped ({@link UnclaimedState}).
   */
  public static LocalStack start(StackSettings settings, boolean allowNonRestoredState) throws Exception {
    return start(settings, Optional.empty(), allowNonRestoredState);
  }

  /** Starts every service, the click job on a standalone Flink cluster; on failure stops what had started. */
  public static LocalStack startOnCluster(StackSettings settings, ClusterMode mode, boolean allowNonRestoredState)
      throws Exception {
    return start(settings, Optional.of(mode), allowNonRestoredState);
  }

  private static LocalStack start(StackSettings settings, Optional<ClusterMode> clusterMode, boolean allowNonRestoredState)
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
    // A standalone cluster that a killed launcher left running holds the Flink UI's port: stop it first.
    clusterMode.ifPresent(mode -> StandaloneFlinkCluster.stopOrphans(flinkConfDir()));
    // Check every fixed port first, so a taken one fails fast with its name before anything starts.
    int httpPort = Ports.requireFree(settings.httpPort(), "redirect-web", "TALLY_HTTP_PORT");
    flinkUiPort = Ports.requireFree(settings.flinkUiPort(), "the Flink web UI", "TALLY_FLINK_UI_PORT");
    Ports.requireFree(settings.kafkaPort(), "Kafka", "TALLY_KAFKA_PORT");
    flinkMetricsPorts = FlinkMetricsEndpoint.reporterPorts(settings.flinkMetricsPorts());
    if (settings.externalPgUrl().isEmpty()) {
      EmbeddedPostgresServer.stopOrphan(settings.pgData());
      Ports.requireFree(settings.pgPort(), "PostgreSQL", "TALLY_PG_PORT");
    }

    startPostgres();
    TallySchema.migrate(jdbcUrl, settings.pgUser(), settings.pgPassword());

    kafka = EmbeddedKafkaBroker.start(settings.kafkaData(), settings.kafkaPort());
    started.push(kafka);
    kafka.createTopics(ClickTopics.all());

    if (clusterMode.isPresent()) {
      startClickJobOnCluster(clusterMode.get());
    } else {
      startClickJob();
    }

    apiKey = settings.apiKey().orElseGet(() -> HomeSecrets.readOrCreate(settings.home().resolve("api-key"), "dev-"));
    Map<String, String> env = new HashMap<>();
    env.put("TALLY_HTTP_PORT", String.valueOf(httpPort));
    env.put("TALLY_PG_URL", jdbcUrl);
    env.put("TALLY_PG_USER", settings.pgUser());
    env.put("TALLY_PG_PASSWORD", settings.pgPassword());
    env.put("TALLY_KAFKA_BOOTSTRAP", kafka.bootstrapServers());
    env.put("TALLY_CLICK_TOPIC", ClickTopics.CLICKS);
    env.put("TALLY_API_KEYS", apiKey);
    env.put("TALLY_IP_HASH_SECRET", HomeSecrets.readOrCreate(settings.home().resolve("ip-hash-secret"), ""));
    passThrough(env, "TALLY_PUBLIC_URL", "TALLY_TRUSTED_PROXIES", "TALLY_COUNTRY_HEADER",
        "TALLY_GEOIP_DB", "TALLY_KAFKA_BUFFER_BYTES", "TALLY_KAFKA_MAX_BLOCK_MS", "TALLY_KAFKA_DELIVERY_TIMEOUT_MS",
        "TALLY_LINK_REFRESH_MS", "TALLY_LINK_STALE_LIMIT_MINUTES", "TALLY_PG_LOOKUP_TIMEOUT_MS",
        "TALLY_MINUTE_RETENTION_DAYS");
    web = RedirectWebServer.start(RedirectWebConfig.fromEnv(env));
    started.push(web);
    // Kafka is ours and up: "up" should mean that the first click is counted, not dropped for lack of metadata.
    web.awaitClickTopic(Duration.ofSeconds(30));
    JobID job = JobID.fromHexString(clickJobId);
    flinkMetricsPort = FlinkMetricsEndpoint.find(reporterPorts, job, Duration.ofSeconds(30));
  }

  private static void passThrough(Map<String, String> env, String... names) {
    for (String name : names) {
      String value = System.getenv(name);
      if (value != null) {
        env.put(name, value);
      }
    }
  }

  private void startPostgres() {
    if (settings.externalPgUrl().isPresent()) {
      jdbcUrl = settings.externalPgUrl().get();
      psqlUrl = jdbcUrl.replaceFirst("^jdbc:", "");
      return;
    }
    EmbeddedPostgresServer postgres =
        EmbeddedPostgresServer.start(settings.pgData(), settings.pgPort(), EmbeddedPostgresServer.Durability.FAST);
    started.push(postgres);
    jdbcUrl = postgres.jdbcUrl();
    psqlUrl = postgres.psqlUrl();
  }

  /** The click job's flags for this stack's Kafka and PostgreSQL, as {@code flink run} would take them. */
  static List<String> clickJobFlags(String bootstrapServers, String jdbcUrl, StackSettings settings) {
    return List.of(
        "--bootstrap-servers", bootstrapServers,
        "--topic", ClickTopics.CLICKS,
        "--dlq-topic", ClickTopics.DEAD_LETTERS,
        "--jdbc-url", jdbcUrl,
        "--jdbc-user", settings.pgUser(),
        "--jdbc-password", settings.pgPassword());
  }

  /**
   * The newest retained checkpoint to resume from, after deleting the folders of older jobs. Resuming
   * restores the open periods, the dedup set and Kafka offsets together; offsets alone would lose open
   * minutes. A checkpoint with state the job would not take back is refused unless that was allowed.
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
    // The reporters of the cluster's processes take ports of the same range as the MiniCluster's would.
    Map<String, String> properties = new HashMap<>(mode.flinkProperties());
    properties.putIfAbsent(REPORTER_PORT, flinkMetricsPorts.toString());
    reporterPorts = properties.get(REPORTER_PORT);
    Path confDir = FlinkConf.writeCluster(flinkConfDir(), settings.home(), flinkUiPort, properties);
    cluster = StandaloneFlinkCluster.start(mode.install(), confDir, settings.logs(), flinkUiPort);
    started.push(cluster);
    List<String> flags = new ArrayList<>(clickJobFlags(kafka.bootstrapServers(), jdbcUrl, settings));
    flags.addAll(List.of("--parallelism", String.valueOf(mode.clickJobParallelism())));
    resumedFrom = resumePoint(ClickJobOptions.parse(flags.toArray(String[]::new)));
    FlinkCli cli = new FlinkCli(mode.install(), cluster.endpoint(), flinkHome.resolve("cli"));
    clickJobId = cli.runDetached(new FlinkCli.Submission(mode.install().clickJobJar(), flags,
        resumedFrom.map(p -> p.toUri().toString()), allowNonRestoredState)).toHexString();
    started.push(this::cancelClickJobOnCluster);
  }

  private void cancelClickJobOnCluster() {
    // Whichever click job runs now (./tally flink run may have replaced the one started here); cancelling
    // keeps its retained checkpoints (RETAIN_ON_CANCELLATION), which the next start resumes from.
    try (FlinkRest rest = FlinkRest.connect(cluster.endpoint())) {
      rest.activeJob(ClickCountJob.JOB_NAME).ifPresent(job -> rest.cancel(job.getJobId()));
    }
  }

  private void startClickJob() throws Exception {
    List<String> flags = new ArrayList<>(clickJobFlags(kafka.bootstrapServers(), jdbcUrl, settings));
    flags.addAll(List.of("--checkpoint-dir", settings.checkpoints().toUri().toString(), "--parallelism", "2"));
    ClickJobOptions options = ClickJobOptions.parse(flags.toArray(String[]::new));
    Configuration conf = ClickCountJob.configuration(options);
    conf.set(RestOptions.PORT, flinkUiPort);
    conf.set(RestOptions.ADDRESS, "localhost");
    conf.setString("rest.bind-address", "localhost");
    // No jar upload through the web UI or REST API: an uploaded jar runs whatever code it holds.
    conf.setString("web.submit.enable", "false");
    conf.setString("taskmanager.numberOfTaskSlots", "2");
    // RocksDB's memory for the dedup set and windows; the MiniCluster's 128 MB default made the job several
    // times slower on a backlog (measured in docs/benchmarks.md).
    conf.setString("taskmanager.memory.managed.size", "512m");
    // The same reporter a cluster's config.yaml names, so the dashboard and alerts work on either. The
    // MiniCluster finds the factory on the classpath, a cluster in its plugins folder.
    conf.setString("metrics.reporter.prom.factory.class", FlinkMetricsEndpoint.REPORTER_FACTORY);
    reporterPorts = flinkMetricsPorts.toString();
    conf.setString(REPORTER_PORT, reporterPorts);
    Path tmp = settings.tmp();
    Files.createDirectories(tmp);
    conf.setString("io.tmp.dirs", tmp.toString());
    conf.setString("web.tmpdir", tmp.toString());
    resumedFrom = resumePoint(options);
    resumedFrom.ifPresent(path -> conf.setString("execution.state-recovery.path", path.toUri().toString()));
    if (allowNonRestoredState) {
      // The upgrade across a state layout: every stateful uid carries its layout's version, so an older
      // checkpoint restores nothing and the job starts as without state, rewinding to recount the open day.
      conf.setString("execution.state-recovery.ignore-unclaimed-state", "true");
    }

    StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironmentWithWebUI(conf);
    ClickCountJob.build(env, options);
    JobClient clickJob = env.executeAsync(ClickCountJob.JOB_NAME);
    clickJobId = clickJob.getJobID().toHexString();
    started.push(() -> cancelClickJob(clickJob));
  }

  private static void cancelClickJob(JobClient clickJob) throws Exception {
    // Cancelling keeps the retained checkpoints (RETAIN_ON_CANCELLATION); the next start resumes from them.
    clickJob.cancel().get(30, TimeUnit.SECONDS);
    try {
      clickJob.getJobExecutionResult().get(30, TimeUnit.SECONDS);
    } catch (Exception expected) {
      // A cancelled job completes exceptionally; that is the normal end here.
    }
  }

  public String redirectUrl() {
    return "http://localhost:" + web.port();
  }

  public String flinkUiUrl() {
    return "http://localhost:" + flinkUiPort;
  }

  /**
   * Where Flink's Prometheus reporter answers, empty when it did not start (its error is in the log):
   * the reporter listens on every interface, since Flink gives it no bind address.
   */
  public Optional<String> flinkMetricsUrl() {
    return flinkMetricsPort.isPresent() ? Optional.of(FlinkMetricsEndpoint.url(flinkMetricsPort.getAsInt())) : Optional.empty();
  }

  /** The ports the reporters were given, as Flink's option takes them. */
  public String flinkMetricsPorts() {
    return reporterPorts;
  }

  public String kafkaBootstrap() {
    return kafka.bootstrapServers();
  }

  public EmbeddedKafkaBroker kafka() {
    return kafka;
  }

  public String jdbcUrl() {
    return jdbcUrl;
  }

  public String psqlUrl() {
    return psqlUrl;
  }

  public String apiKey() {
    return apiKey;
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
    while (!started.isEmpty()) {
      AutoCloseable service = started.pop();
      try {
        service.close();
      } catch (Exception e) {
        LOG.warn("error while stopping {}", service, e);
      }
    }
  }

}
