package io.tally.embedded;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

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
