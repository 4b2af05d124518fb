package io.tally.embedded;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A real PostgreSQL server (zonky's packaged binaries) that keeps its data in a folder of ours, so a
 * restart keeps links and counts.
 *
 * <p>zonky turns {@code fsync} off by default, which survives a process kill but not an OS crash. The
 * {@link Durability#DURABLE} mode turns fsync and synchronous commit back on, as a real server has them;
 * benchmarks that compare against database writes must use it.
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

  private EmbeddedPostgresServer(EmbeddedPostgres postgres) {
    this.postgres = postgres;
  }

  /**
   * Starts PostgreSQL with its data in {@code dataDir} (created and initialised when new, reused
   * otherwise) on {@code port} (0 picks a free one).
   *
   * @throws Ports.PortInUseException when the port is taken
   */
  public static EmbeddedPostgresServer start(Path dataDir, int port, Durability durability) {
    stopOrphan(dataDir);
    int pgPort = Ports.requireFree(port, "PostgreSQL", "TALLY_PG_PORT");
    try {
      Files.createDirectories(dataDir);
      String on = durability == Durability.DURABLE ? "on" : "off";
      EmbeddedPostgres postgres =
          EmbeddedPostgres.builder()
              .setDataDirectory(dataDir)
              .setCleanDataDirectory(false)
              .setOverrideWorkingDirectory(dataDir.resolveSibling(dataDir.getFileName() + "-bin").toFile())
              .setPort(pgPort)
              .setServerConfig("fsync", on)
              .setServerConfig("synchronous_commit", on)
              .setServerConfig("full_page_writes", on)
              .setServerConfig("max_connections", "200")
              .start();
      return new EmbeddedPostgresServer(postgres);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start PostgreSQL in " + dataDir, e);
    }
  }

  /**
   * Stops a server left running on {@code dataDir} by a process that died without closing it (a
   * {@code kill -9} of {@code ./tally up} kills the JVM but not PostgreSQL, its child). Its clients died
   * with that JVM, so a normal shutdown is quick; the data directory is then free to start again.
   */
  public static void stopOrphan(Path dataDir) {
    Path pidFile = dataDir.resolve("postmaster.pid");
    if (!Files.exists(pidFile)) {
      return;
    }
    try {
      long pid = Long.parseLong(Files.readAllLines(pidFile).get(0).trim());
      Optional<ProcessHandle> postmaster = ProcessHandle.of(pid)
          .filter(p -> p.info().command().map(c -> c.endsWith("postgres")).orElse(false));
      if (postmaster.isPresent()) {
        LOG.warn("PostgreSQL (pid {}) is still running on {} from an earlier run that did not stop it; stopping it", pid, dataDir);
        postmaster.get().destroy();
        postmaster.get().onExit().get(60, TimeUnit.SECONDS);
      }
    } catch (IOException | RuntimeException | InterruptedException | ExecutionException | TimeoutException e) {
      LOG.warn("could not check for a PostgreSQL left running on {}: {}", dataDir, e.toString());
    }
  }

  public int port() {
    return postgres.getPort();
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
      postgres.close();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot stop PostgreSQL", e);
    }
  }
}
