package io.tally.local;

import io.tally.embedded.EmbeddedKafkaBroker;
import io.tally.embedded.EmbeddedPostgresServer;
import io.tally.embedded.EmbeddedPostgresServer.Durability;
import io.tally.embedded.KafkaBrokerCluster;
import io.tally.embedded.ReplicatedPostgres;
import io.tally.schema.TallySchema;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.NewTopic;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The services the click job and redirect-web run against on one machine: PostgreSQL with Tally's
 * schema (embedded, or a server given by URL) and the embedded KRaft Kafka broker. {@code ./tally
 * up} keeps them in its home folder; the benchmarks and chaos scenarios start them fresh in a
 * scratch folder, with a durable PostgreSQL, and delete it on close. Closing stops them in reverse
 * order.
 */
public final class LocalServices implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(LocalServices.class);

  /**
   * How many copies of each service run.
   *
   * @param brokers Kafka nodes: 1 in this JVM, more in JVMs of their own with every topic on 3 of
   *     them (or all, when fewer); with 3 or more, 2 copies in sync are needed for a write
   * @param pgStandby whether PostgreSQL runs as a primary with a hot standby
   */
  public record Topology(int brokers, boolean pgStandby) {

    /** The embedded default: one broker in this JVM, one PostgreSQL. */
    public static final Topology SINGLE = new Topology(1, false);

    /** The smallest cluster that survives losing any one machine: three brokers and a standby. */
    public static final Topology CLUSTER = new Topology(3, true);

    public Topology {
      if (brokers < 1) {
        throw new IllegalArgumentException("at least one Kafka broker, not " + brokers);
      }
    }

    /** Copies of each topic's partitions. */
    public short replicationFactor() {
      return (short) Math.min(3, brokers);
    }
  }

  /**
   * Where and how the services run.
   *
   * @param pgData the embedded PostgreSQL's data folder
   * @param pgPort its port (0 for a free one)
   * @param durability whether commits wait for the disk
   * @param externalPgUrl a PostgreSQL server to use instead of the embedded one
   * @param pgUser the database user
   * @param pgPassword the database user's password
   * @param kafkaData the broker's log folder
   * @param kafkaPort the broker's port (0 for a free one)
   * @param home the folder that holds the data folders and whatever else the caller keeps beside
   *     them
   * @param deleteOnClose whether closing deletes {@code home}
   * @param stopOnJvmExit whether the embedded PostgreSQL stops by itself when the JVM exits; false
   *     when the caller's own shutdown closes these services
   * @param topology one of each service, or a cluster of them
   */
  public record Spec(
      Path pgData,
      int pgPort,
      Durability durability,
      Optional<String> externalPgUrl,
      String pgUser,
      String pgPassword,
      Path kafkaData,
      int kafkaPort,
      Path home,
      boolean deleteOnClose,
      boolean stopOnJvmExit,
      Topology topology) {

    /**
     * Fresh services on free ports under {@code dir}, with PostgreSQL as durable as a production
     * server (fsync and synchronous commits, checked); the folder is deleted on close unless {@code
     * keep}.
     */
    public static Spec scratch(Path dir, boolean keep) {
      return scratch(dir, keep, Topology.SINGLE);
    }

    /** As {@link #scratch(Path, boolean)}, with {@code topology}. */
    public static Spec scratch(Path dir, boolean keep, Topology topology) {
      return new Spec(
          dir.resolve("pg"),
          0,
          Durability.DURABLE,
          Optional.empty(),
          EmbeddedPostgresServer.USER,
          "",
          dir.resolve("kafka"),
          0,
          dir,
          !keep,
          true,
          topology);
    }
  }

  private final Spec spec;
  private final Teardown teardown = new Teardown();
  private String jdbcUrl;
  private String psqlUrl;
  private EmbeddedKafkaBroker kafka;
  private KafkaBrokerCluster kafkaCluster;
  private ReplicatedPostgres replicatedPostgres;
  private Map<String, String> pgSettings = Map.of();

  private LocalServices(Spec spec) {
    this.spec = spec;
  }

  /**
   * Starts PostgreSQL (unless external), brings the schema up to date and starts Kafka; on failure
   * stops both.
   */
  public static LocalServices start(Spec spec) {
    LocalServices services = new LocalServices(spec);
    try {
      services.startAll();
      return services;
    } catch (RuntimeException | Error e) {
      services.close();
      throw e;
    }
  }

  private void startAll() {
    try {
      Files.createDirectories(spec.home());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    if (spec.externalPgUrl().isPresent()) {
      jdbcUrl = spec.externalPgUrl().get();
      psqlUrl = jdbcUrl.replaceFirst("^jdbc:", "");
    } else if (spec.topology().pgStandby()) {
      replicatedPostgres =
          ReplicatedPostgres.start(spec.pgData(), spec.pgPort(), spec.stopOnJvmExit());
      teardown.add(replicatedPostgres);
      jdbcUrl = replicatedPostgres.jdbcUrl();
      psqlUrl = replicatedPostgres.psqlUrl();
      pgSettings = requireDurable();
    } else {
      EmbeddedPostgresServer postgres =
          EmbeddedPostgresServer.start(
              spec.pgData(), spec.pgPort(), spec.durability(), spec.stopOnJvmExit());
      teardown.add(postgres);
      jdbcUrl = postgres.jdbcUrl();
      psqlUrl = postgres.psqlUrl();
      if (spec.durability() == Durability.DURABLE) {
        pgSettings = requireDurable();
      }
    }
    TallySchema.migrate(jdbcUrl, spec.pgUser(), spec.pgPassword());
    if (spec.topology().brokers() > 1) {
      kafkaCluster =
          KafkaBrokerCluster.start(spec.kafkaData(), spec.topology().brokers(), spec.kafkaPort());
      teardown.add(kafkaCluster);
    } else {
      kafka = EmbeddedKafkaBroker.start(spec.kafkaData(), spec.kafkaPort());
      teardown.add(kafka);
    }
  }

  /**
   * Fails unless commits really wait for the disk; turns on WAL I/O timing, which {@code bench
   * redirect} reads to tell commit cost apart from lock waits. Returns the settings, for reports.
   */
  private Map<String, String> requireDurable() {
    try (Connection c = connect();
        Statement s = c.createStatement()) {
      // Not on the command line, so ALTER SYSTEM takes effect with a reload (fsync must not be set
      // this way).
      s.execute("ALTER SYSTEM SET track_wal_io_timing = on");
      s.execute("SELECT pg_reload_conf()");
      Map<String, String> settings = new LinkedHashMap<>();
      for (String name :
          List.of(
              "server_version",
              "fsync",
              "synchronous_commit",
              "full_page_writes",
              "wal_sync_method",
              "shared_buffers",
              "max_connections",
              "track_wal_io_timing")) {
        try (ResultSet rs = s.executeQuery("SHOW " + name)) {
          rs.next();
          settings.put(name, rs.getString(1));
        }
      }
      if (!"on".equals(settings.get("fsync")) || !"on".equals(settings.get("synchronous_commit"))) {
        throw new IllegalStateException("PostgreSQL is not durable: " + settings);
      }
      return settings;
    } catch (SQLException e) {
      throw new IllegalStateException("cannot read PostgreSQL settings", e);
    }
  }

  /**
   * The click job's flags for these services and the standard topics, as {@code flink run} takes
   * them.
   */
  public List<String> clickJobFlags() {
    return clickJobFlags(bootstrapServers(), jdbcUrl, spec.pgUser(), spec.pgPassword());
  }

  /** The click job's flags for the standard topics on the given Kafka and PostgreSQL. */
  public static List<String> clickJobFlags(
      String bootstrapServers, String jdbcUrl, String user, String password) {
    return List.of(
        "--bootstrap-servers", bootstrapServers,
        "--topic", ClickTopics.CLICKS,
        "--dlq-topic", ClickTopics.DEAD_LETTERS,
        "--jdbc-url", jdbcUrl,
        "--jdbc-user", user,
        "--jdbc-password", password);
  }

  /**
   * redirect-web's settings for these services and the click topic, as {@code TALLY_*} variables.
   */
  public Map<String, String> redirectWebEnv() {
    return Map.of(
        "TALLY_PG_URL", jdbcUrl,
        "TALLY_PG_USER", spec.pgUser(),
        "TALLY_PG_PASSWORD", spec.pgPassword(),
        "TALLY_KAFKA_BOOTSTRAP", bootstrapServers(),
        "TALLY_CLICK_TOPIC", ClickTopics.CLICKS);
  }

  /**
   * redirect-web's settings for a server of a tool's own on a free port, with the given API key and
   * visitor-hash secret.
   */
  public Map<String, String> redirectWebEnv(String apiKey, String ipHashSecret) {
    Map<String, String> env = new HashMap<>(redirectWebEnv());
    env.put("TALLY_HTTP_PORT", "0");
    env.put("TALLY_API_KEYS", apiKey);
    env.put("TALLY_IP_HASH_SECRET", ipHashSecret);
    return env;
  }

  /**
   * Inserts links straight into the table, for tools whose subject is not the links API; codes
   * already there are left as they are.
   */
  public void insertLinks(List<String> codes, Function<String, String> urlOfCode)
      throws SQLException {
    try (Connection c = connect();
        PreparedStatement ps =
            c.prepareStatement(
                "INSERT INTO links (code, url) VALUES (?, ?) ON CONFLICT (code) DO NOTHING")) {
      c.setAutoCommit(false);
      for (String code : codes) {
        ps.setString(1, code);
        ps.setString(2, urlOfCode.apply(code));
        ps.addBatch();
      }
      ps.executeBatch();
      c.commit();
    }
  }

  /**
   * Creates the click topic and its dead letters ({@link ClickTopics#all(short)}) with the
   * topology's replicas unless they exist.
   */
  public void createClickTopics() {
    createTopics(ClickTopics.all(spec.topology().replicationFactor()));
  }

  /** Creates the given topics unless they exist. */
  public void createTopics(List<NewTopic> topics) {
    if (kafkaCluster != null) {
      kafkaCluster.createTopics(topics);
    } else {
      kafka.createTopics(topics);
    }
  }

  /** The folder that holds the services' data, and the caller's beside it. */
  public Path dir() {
    return spec.home();
  }

  public String jdbcUrl() {
    return jdbcUrl;
  }

  /** The URL {@code psql} takes. */
  public String psqlUrl() {
    return psqlUrl;
  }

  public String dbUser() {
    return spec.pgUser();
  }

  public String dbPassword() {
    return spec.pgPassword();
  }

  public Connection connect() throws SQLException {
    return DriverManager.getConnection(jdbcUrl, spec.pgUser(), spec.pgPassword());
  }

  /** The embedded postmaster's process id, for measuring PostgreSQL's CPU time. */
  public long postmasterPid() {
    Path data = replicatedPostgres != null ? replicatedPostgres.primary().dataDir() : spec.pgData();
    return EmbeddedPostgresServer.postmaster(data)
        .map(ProcessHandle::pid)
        .orElseThrow(() -> new IllegalStateException("no PostgreSQL is running on " + data));
  }

  /** The durable PostgreSQL's settings as checked at start; empty for a fast or external one. */
  public Map<String, String> pgSettings() {
    return pgSettings;
  }

  /**
   * The broker of a single-broker topology.
   *
   * @throws IllegalStateException when Kafka runs as a cluster
   */
  public EmbeddedKafkaBroker kafka() {
    if (kafka == null) {
      throw new IllegalStateException("Kafka runs as a cluster here: see kafkaCluster()");
    }
    return kafka;
  }

  /** The Kafka nodes of a cluster topology, empty for the single embedded broker. */
  public Optional<KafkaBrokerCluster> kafkaCluster() {
    return Optional.ofNullable(kafkaCluster);
  }

  /** The primary and standby of a topology with one, empty otherwise. */
  public Optional<ReplicatedPostgres> replicatedPostgres() {
    return Optional.ofNullable(replicatedPostgres);
  }

  public String bootstrapServers() {
    return kafkaCluster != null ? kafkaCluster.bootstrapServers() : kafka.bootstrapServers();
  }

  @Override
  public void close() {
    teardown.close();
    if (spec.deleteOnClose()) {
      delete(spec.home());
    }
  }

  private static void delete(Path dir) {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(dir)) {
      paths
          .sorted(Comparator.reverseOrder())
          .forEach(
              p -> {
                try {
                  Files.deleteIfExists(p);
                } catch (IOException e) {
                  LOG.warn("cannot delete {}: {}", p, e.toString());
                }
              });
    } catch (IOException e) {
      LOG.warn("cannot delete {}: {}", dir, e.toString());
    }
  }
}
