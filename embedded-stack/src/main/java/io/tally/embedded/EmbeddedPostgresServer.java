package io.tally.embedded;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A real PostgreSQL server (zonky's packaged binaries) that keeps its data in a folder of ours, so
 * a restart keeps links and counts.
 *
 * <p>zonky turns {@code fsync} off by default, which survives a process kill but not an OS crash.
 * The {@link Durability#DURABLE} mode turns fsync and synchronous commit back on, as a real server
 * has them; benchmarks that compare against database writes must use it.
 */
public final class EmbeddedPostgresServer implements AutoCloseable {

  /** Whether commits reach the disk before they are acknowledged. */
  public enum Durability {
    /** fsync off: fast, survives a process kill, not an OS crash. For tests and the local stack. */
    FAST,
    /** fsync and synchronous_commit on, as a production server runs. For benchmarks. */
    DURABLE
  }

  private static final Logger LOG = LoggerFactory.getLogger(EmbeddedPostgresServer.class);

  public static final String USER = "postgres";
  public static final String DATABASE = "postgres";

  private final EmbeddedPostgres postgres;
  private final Path dataDir;

  private EmbeddedPostgresServer(EmbeddedPostgres postgres, Path dataDir) {
    this.postgres = postgres;
    this.dataDir = dataDir;
  }

  /**
   * Starts PostgreSQL with its data in {@code dataDir} (created and initialised when new, reused
   * otherwise) on {@code port} (0 picks a free one).
   *
   * @throws Ports.PortInUseException when the port is taken
   * @throws IllegalStateException when a live process already runs a server on {@code dataDir}
   */
  public static EmbeddedPostgresServer start(Path dataDir, int port, Durability durability) {
    return start(dataDir, port, durability, true);
  }

  /**
   * Starts PostgreSQL as {@link #start(Path, int, Durability)} does.
   *
   * @param stopOnJvmExit whether a shutdown hook of its own stops the server when the JVM exits;
   *     false for a caller whose own shutdown stops it, after the clients it serves, since the JVM
   *     runs its shutdown hooks all at once
   */
  public static EmbeddedPostgresServer start(
      Path dataDir, int port, Durability durability, boolean stopOnJvmExit) {
    return start(dataDir, port, durability, stopOnJvmExit, Map.of());
  }

  /**
   * Starts PostgreSQL as {@link #start(Path, int, Durability, boolean)} does, with {@code settings}
   * on its command line besides the usual ones: they hold for this start only and are never written
   * into the data folder, which a standby copies.
   */
  public static EmbeddedPostgresServer start(
      Path dataDir,
      int port,
      Durability durability,
      boolean stopOnJvmExit,
      Map<String, String> settings) {
    stopOrphan(dataDir);
    int pgPort = Ports.requireFree(port, "PostgreSQL", "TALLY_PG_PORT");
    try {
      Files.createDirectories(dataDir);
      String on = durability == Durability.DURABLE ? "on" : "off";
      EmbeddedPostgres.Builder builder =
          EmbeddedPostgres.builder()
              .setDataDirectory(dataDir)
              .setCleanDataDirectory(false)
              .setOverrideWorkingDirectory(
                  dataDir.resolveSibling(dataDir.getFileName() + "-bin").toFile())
              .setPort(pgPort)
              .setServerConfig("fsync", on)
              .setServerConfig("synchronous_commit", on)
              .setServerConfig("full_page_writes", on)
              .setServerConfig("max_connections", "200")
              .setRegisterShutdownHook(stopOnJvmExit)
              // A standby may replay WAL for a while before it takes connections.
              .setPGStartupWait(Duration.ofSeconds(60));
      settings.forEach(builder::setServerConfig);
      EmbeddedPostgres postgres = builder.start();
      Files.writeString(
          ownerFile(dataDir),
          ProcessHandle.current().pid() + " " + startMillis(ProcessHandle.current()));
      return new EmbeddedPostgresServer(postgres, dataDir);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start PostgreSQL in " + dataDir, e);
    }
  }

  /**
   * Stops a server left running on {@code dataDir} by a process that died without closing it (a
   * {@code kill -9} of {@code ./tally up} kills the JVM but not PostgreSQL, which is not its child
   * once started). Its clients died with that JVM, so a normal shutdown is quick; the data
   * directory is then free to start again. A server whose starting process is still alive is not an
   * orphan: it is left alone, and this fails.
   *
   * @throws IllegalStateException when the process that started the server on {@code dataDir} is
   *     alive
   */
  public static void stopOrphan(Path dataDir) {
    Optional<ProcessHandle> owner = liveOwner(dataDir);
    if (owner.isPresent()) {
      throw new IllegalStateException(
          "PostgreSQL on "
              + dataDir
              + " belongs to a running process (pid "
              + owner.get().pid()
              + ", port "
              + postmasterPort(dataDir).map(String::valueOf).orElse("?")
              + "); stop that first, or use its port");
    }
    Path pidFile = dataDir.resolve("postmaster.pid");
    if (!Files.exists(pidFile)) {
      return;
    }
    try {
      long pid = Long.parseLong(Files.readAllLines(pidFile).get(0).trim());
      Optional<ProcessHandle> postmaster =
          ProcessHandle.of(pid)
              .filter(p -> p.info().command().map(c -> c.endsWith("postgres")).orElse(false));
      if (postmaster.isPresent()) {
        LOG.warn(
            "PostgreSQL (pid {}) is still running on {} from an earlier run that did not stop it;"
                + " stopping it",
            pid,
            dataDir);
        postmaster.get().destroy();
        postmaster.get().onExit().get(60, TimeUnit.SECONDS);
      }
    } catch (IOException
        | RuntimeException
        | InterruptedException
        | ExecutionException
        | TimeoutException e) {
      LOG.warn("could not check for a PostgreSQL left running on {}: {}", dataDir, e.toString());
    }
  }

  /**
   * The port of the server that a live process runs on {@code dataDir}, read from its {@code
   * postmaster.pid}; empty when there is none.
   */
  public static Optional<Integer> runningPort(Path dataDir) {
    return liveOwner(dataDir).isPresent() ? postmasterPort(dataDir) : Optional.empty();
  }

  /**
   * The port {@code postmaster.pid} in {@code dataDir} names (its fourth line), if it can be read.
   */
  private static Optional<Integer> postmasterPort(Path dataDir) {
    try {
      List<String> lines = Files.readAllLines(dataDir.resolve("postmaster.pid"));
      return lines.size() > 3
          ? Optional.of(Integer.parseInt(lines.get(3).trim()))
          : Optional.empty();
    } catch (IOException | NumberFormatException e) {
      return Optional.empty();
    }
  }

  /**
   * The process that started the server on {@code dataDir}, if it is still alive (pid and start
   * time).
   */
  private static Optional<ProcessHandle> liveOwner(Path dataDir) {
    try {
      String[] owner = Files.readString(ownerFile(dataDir)).trim().split(" ");
      long startedAt = Long.parseLong(owner[1]);
      return ProcessHandle.of(Long.parseLong(owner[0]))
          .filter(ProcessHandle::isAlive)
          .filter(p -> startMillis(p) == startedAt);
    } catch (IOException | RuntimeException e) {
      return Optional.empty();
    }
  }

  /**
   * Written next to the data folder: the pid and start time of the process that started the server.
   */
  private static Path ownerFile(Path dataDir) {
    return dataDir.resolveSibling(dataDir.getFileName() + ".owner");
  }

  /** A pid can be reused; with its start time it names one process. */
  private static long startMillis(ProcessHandle process) {
    return process.info().startInstant().map(Instant::toEpochMilli).orElse(-1L);
  }

  public int port() {
    return postgres.getPort();
  }

  /** The data folder. */
  public Path dataDir() {
    return dataDir;
  }

  /** The postmaster's process, read from its {@code postmaster.pid}. */
  public Optional<ProcessHandle> postmaster() {
    return postmaster(dataDir);
  }

  /** The process of the postmaster on {@code dataDir}, read from its {@code postmaster.pid}. */
  public static Optional<ProcessHandle> postmaster(Path dataDir) {
    try {
      long pid =
          Long.parseLong(Files.readAllLines(dataDir.resolve("postmaster.pid")).get(0).trim());
      return ProcessHandle.of(pid);
    } catch (IOException | RuntimeException e) {
      return Optional.empty();
    }
  }

  /** The JDBC URL of the default database. */
  public String jdbcUrl() {
    return "jdbc:postgresql://localhost:" + port() + "/" + DATABASE;
  }

  /** A {@code postgresql://} URL that {@code psql} accepts. */
  public String psqlUrl() {
    return "postgresql://" + USER + "@localhost:" + port() + "/" + DATABASE;
  }

  @Override
  public void close() {
    try {
      try {
        postgres.close();
      } catch (IOException | RuntimeException e) {
        // A server that was killed has nothing to stop; zonky's close still releases its lock.
        if (postmaster().map(ProcessHandle::isAlive).orElse(false)) {
          throw e;
        }
      }
      Files.deleteIfExists(ownerFile(dataDir));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot stop PostgreSQL", e);
    }
  }
}
