package io.tally.embedded;

import io.tally.embedded.EmbeddedPostgresServer.Durability;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * PostgreSQL as a deployment that survives losing its server runs it: a primary and a hot standby
 * fed by streaming replication, both from zonky's binaries, clients reaching whichever is primary
 * through one multi-host JDBC URL ({@code targetServerType=primary}).
 *
 * <p>Replication is synchronous: a commit is acknowledged once the standby has it on disk, so a
 * failover loses no count the click job was told was written. The price is that the primary waits
 * while its standby is down; the click job then backs off as it does for a slow database.
 *
 * <p>zonky ships no {@code pg_basebackup}, so the standby is seeded with a copy of the primary's
 * folder taken while the primary is stopped, which only happens at start. Which of the two folders
 * is the primary is kept in a file beside them; {@link #promoteStandby()} changes it, and the next
 * start seeds the old primary's folder afresh from the new one. Nothing here promotes by itself: in
 * production that is the job of Patroni, a managed service or an operator.
 */
public final class ReplicatedPostgres implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(ReplicatedPostgres.class);

  /** The physical replication slot that keeps the WAL the standby has not yet received. */
  static final String SLOT = "tally_standby";

  private static final List<String> NODES = List.of("pg-a", "pg-b");

  /** Files of a running server that a copy of its folder must not take. */
  private static final Set<String> NOT_COPIED =
      Set.of("postmaster.pid", "postmaster.opts", "epg-lock", "standby.signal");

  private static final Duration STREAMING_TIMEOUT = Duration.ofSeconds(60);

  private final Path dir;
  private final int firstPort;
  private EmbeddedPostgresServer primary;
  private EmbeddedPostgresServer standby;
  private String primaryNode;
  private final int[] ports = new int[2];

  private final boolean stopOnJvmExit;

  private ReplicatedPostgres(Path dir, int firstPort, boolean stopOnJvmExit) {
    this.dir = dir;
    this.firstPort = firstPort;
    this.stopOnJvmExit = stopOnJvmExit;
  }

  /**
   * Starts the pair with its folders under {@code dir} (seeding the standby when it is new or was
   * promoted since), {@code pg-a} on {@code port} and {@code pg-b} on the next (0 picks free ones),
   * and returns once the standby streams from the primary.
   *
   * @param stopOnJvmExit whether the servers stop by themselves when this JVM exits; false when the
   *     caller's own shutdown closes them after their clients
   */
  public static ReplicatedPostgres start(Path dir, int port, boolean stopOnJvmExit) {
    ReplicatedPostgres pair = new ReplicatedPostgres(dir, port, stopOnJvmExit);
    try {
      pair.startBoth();
      return pair;
    } catch (RuntimeException | Error e) {
      pair.close();
      throw e;
    }
  }

  private void startBoth() {
    stopOrphans(dir);
    try {
      Files.createDirectories(dir);
      primaryNode = currentPrimary();
      Files.writeString(dir.resolve("primary"), primaryNode);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    String standbyNode = other(primaryNode);
    for (int i = 0; i < ports.length; i++) {
      ports[i] =
          firstPort == 0
              ? Ports.ephemeral()
              : Ports.requireFree(firstPort + i, "PostgreSQL " + NODES.get(i), "TALLY_PG_PORT");
    }
    Path standbyData = dir.resolve(standbyNode);
    if (!Files.exists(standbyData.resolve("standby.signal"))) {
      seedStandby(dir.resolve(primaryNode), standbyData);
    }
    primary = startNode(primaryNode, Map.of("synchronous_standby_names", SLOT));
    writeStandbyConnection(standbyData, portOf(primaryNode));
    standby = startNode(standbyNode, Map.of());
    awaitStreaming();
    LOG.info(
        "PostgreSQL primary {} on port {}, hot standby {} on port {}, streaming",
        primaryNode,
        primary.port(),
        standbyNode,
        standby.port());
  }

  /**
   * Which folder holds the primary. A folder with {@code standby.signal} is a standby; of two
   * without it, both having been promoted or one promoted by hand, the one on the later timeline is
   * the primary, since promotion starts a new one. Only when that cannot tell does the file {@code
   * primary} decide, so a standby promoted without this class is never overwritten with the older
   * primary's data.
   */
  private String currentPrimary() throws IOException {
    Path marker = dir.resolve("primary");
    String recorded = Files.exists(marker) ? Files.readString(marker).trim() : NODES.get(0);
    List<String> primaries =
        NODES.stream()
            .filter(n -> Files.exists(dir.resolve(n).resolve("PG_VERSION")))
            .filter(n -> !Files.exists(dir.resolve(n).resolve("standby.signal")))
            .toList();
    if (primaries.size() == 1) {
      return primaries.get(0);
    }
    if (primaries.size() == 2) {
      long a = timeline(dir.resolve(NODES.get(0)));
      long b = timeline(dir.resolve(NODES.get(1)));
      if (a != b) {
        return a > b ? NODES.get(0) : NODES.get(1);
      }
    }
    return recorded;
  }

  /** The newest timeline of a data folder: the highest {@code pg_wal/*.history}, 1 without one. */
  static long timeline(Path dataDir) throws IOException {
    Path wal = dataDir.resolve("pg_wal");
    if (!Files.isDirectory(wal)) {
      return 1;
    }
    try (Stream<Path> files = Files.list(wal)) {
      return files
          .map(f -> f.getFileName().toString())
          .filter(name -> name.matches("[0-9A-F]{8}\\.history"))
          .mapToLong(name -> Long.parseLong(name.substring(0, 8), 16))
          .max()
          .orElse(1);
    }
  }

  /**
   * Stops the servers of a pair kept in {@code dir} that a launcher killed with {@code kill -9}
   * left running ({@link EmbeddedPostgresServer#stopOrphan}).
   */
  public static void stopOrphans(Path dir) {
    NODES.forEach(node -> EmbeddedPostgresServer.stopOrphan(dir.resolve(node)));
  }

  private EmbeddedPostgresServer startNode(String node, Map<String, String> settings) {
    Map<String, String> all = new HashMap<>(settings);
    // A standby that is away keeps WAL from being recycled through its slot; bounded, so that a
    // standby gone for good cannot fill the primary's disk.
    all.put("max_slot_wal_keep_size", "1GB");
    all.put("wal_level", "replica");
    all.put("hot_standby", "on");
    return EmbeddedPostgresServer.start(
        dir.resolve(node), portOf(node), Durability.DURABLE, stopOnJvmExit, all);
  }

  private int portOf(String node) {
    return ports[NODES.indexOf(node)];
  }

  private static String other(String node) {
    return NODES.get(1 - NODES.indexOf(node));
  }

  /**
   * Makes {@code standbyData} a copy of the primary's folder: the primary is started (created when
   * new) to make sure of its replication slot, stopped, and copied.
   */
  private void seedStandby(Path primaryData, Path standbyData) {
    LOG.info("seeding the PostgreSQL standby {} from {}", standbyData, primaryData);
    try (EmbeddedPostgresServer seed =
        EmbeddedPostgresServer.start(
            primaryData, portOf(primaryNode), Durability.DURABLE, false, Map.of())) {
      try (Connection c = connectTo(seed);
          Statement s = c.createStatement()) {
        s.execute(
            "SELECT pg_create_physical_replication_slot('"
                + SLOT
                + "', true) WHERE NOT EXISTS (SELECT 1 FROM pg_replication_slots WHERE slot_name ="
                + " '"
                + SLOT
                + "')");
      } catch (SQLException e) {
        throw new IllegalStateException("cannot make the replication slot", e);
      }
    }
    try {
      delete(standbyData);
      try (Stream<Path> files = Files.walk(primaryData)) {
        for (Path from : files.toList()) {
          Path relative = primaryData.relativize(from);
          if (NOT_COPIED.contains(relative.toString())) {
            continue;
          }
          Path to = standbyData.resolve(relative.toString());
          if (Files.isDirectory(from)) {
            Files.createDirectories(to);
          } else {
            Files.copy(from, to);
          }
        }
      }
      // The copy's own slot would hold WAL on the standby for nobody.
      delete(standbyData.resolve("pg_replslot").resolve(SLOT));
      Files.createFile(standbyData.resolve("standby.signal"));
      // PostgreSQL refuses a data folder others may read.
      Files.setPosixFilePermissions(standbyData, PosixFilePermissions.fromString("rwx------"));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot seed the standby " + standbyData, e);
    }
  }

  /**
   * Points the standby at the primary: in {@code postgresql.auto.conf}, as {@code ALTER SYSTEM}
   * would, since the primary's port may differ from one start to the next.
   */
  private static void writeStandbyConnection(Path standbyData, int primaryPort) {
    Path auto = standbyData.resolve("postgresql.auto.conf");
    try {
      List<String> kept =
          Files.exists(auto)
              ? Files.readAllLines(auto).stream()
                  .filter(l -> !l.startsWith("primary_conninfo") && !l.startsWith("primary_slot"))
                  .toList()
              : List.of();
      Files.write(auto, kept);
      Files.writeString(
          auto,
          "primary_conninfo = 'host=localhost port="
              + primaryPort
              + " user="
              + EmbeddedPostgresServer.USER
              + " application_name="
              + SLOT
              + "'\nprimary_slot_name = '"
              + SLOT
              + "'\n",
          StandardOpenOption.APPEND);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private void awaitStreaming() {
    long deadline = System.nanoTime() + STREAMING_TIMEOUT.toNanos();
    while (true) {
      try (Connection c = connectTo(primary);
          Statement s = c.createStatement();
          ResultSet rs =
              s.executeQuery(
                  "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'"
                      + " AND sync_state = 'sync'")) {
        rs.next();
        if (rs.getInt(1) > 0) {
          return;
        }
      } catch (SQLException e) {
        LOG.debug("primary not answering yet: {}", e.toString());
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(
            "the PostgreSQL standby did not stream from the primary within " + STREAMING_TIMEOUT);
      }
      sleep(200);
    }
  }

  private static Connection connectTo(EmbeddedPostgresServer server) throws SQLException {
    return DriverManager.getConnection(server.jdbcUrl(), EmbeddedPostgresServer.USER, "");
  }

  /**
   * The URL clients use: both servers, the driver picking whichever is primary now and checking
   * again every 2 s rather than the default 10 after one fails.
   */
  public String jdbcUrl() {
    return "jdbc:postgresql://localhost:"
        + ports[0]
        + ",localhost:"
        + ports[1]
        + "/"
        + EmbeddedPostgresServer.DATABASE
        + "?targetServerType=primary&hostRecheckSeconds=2";
  }

  /** The primary's own URL, for tools that take one host ({@code psql}). */
  public String psqlUrl() {
    return primary.psqlUrl();
  }

  /** The server that takes writes now. */
  public EmbeddedPostgresServer primary() {
    return primary;
  }

  /** The hot standby, empty once it was promoted. */
  public Optional<EmbeddedPostgresServer> standby() {
    return Optional.ofNullable(standby);
  }

  /** Kills the primary's postmaster with SIGKILL, as a lost machine would. */
  public void killPrimary() throws InterruptedException {
    Optional<ProcessHandle> postmaster = primary.postmaster();
    if (postmaster.isEmpty()) {
      throw new IllegalStateException("the primary's postmaster is not running");
    }
    postmaster.get().destroyForcibly();
    postmaster.get().onExit().orTimeout(30, TimeUnit.SECONDS).join();
    LOG.info("killed the PostgreSQL primary {} (pid {})", primaryNode, postmaster.get().pid());
  }

  /**
   * Promotes the standby ({@code pg_promote}, waiting for it) and makes it the primary for every
   * client of {@link #jdbcUrl()} and for the next start, which seeds the old primary's folder from
   * it.
   */
  public void promoteStandby() {
    if (standby == null) {
      throw new IllegalStateException("there is no standby to promote");
    }
    try (Connection c = connectTo(standby);
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT pg_promote(true, 60)")) {
      rs.next();
      if (!rs.getBoolean(1)) {
        throw new IllegalStateException("the standby was not promoted within 60 s");
      }
    } catch (SQLException e) {
      throw new IllegalStateException("cannot promote the standby", e);
    }
    EmbeddedPostgresServer old = primary;
    primary = standby;
    standby = null;
    primaryNode = other(primaryNode);
    try {
      Files.writeString(dir.resolve("primary"), primaryNode);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    closeQuietly(old);
    LOG.info("promoted the PostgreSQL standby {} to primary", primaryNode);
  }

  @Override
  public void close() {
    closeQuietly(standby);
    closeQuietly(primary);
  }

  private static void closeQuietly(EmbeddedPostgresServer server) {
    if (server == null) {
      return;
    }
    try {
      server.close();
    } catch (RuntimeException e) {
      // A killed server has nothing to stop.
      LOG.debug("stopping PostgreSQL on {}: {}", server.dataDir(), e.toString());
    }
  }

  private static void delete(Path path) throws IOException {
    if (!Files.exists(path)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(path)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.delete(p);
      }
    }
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
