package io.tally.bench.support;

import io.tally.embedded.EmbeddedKafkaBroker;
import io.tally.embedded.EmbeddedPostgresServer;
import io.tally.event.ClickEventCodec;
import io.tally.schema.TallySchema;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.NewTopic;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The services every benchmark runs against, started fresh in a folder of their own: a durable PostgreSQL
 * (fsync and synchronous_commit on, checked, as a production server runs) with Tally's schema, and the
 * embedded Kafka broker. Closing stops both and deletes the folder.
 */
public final class BenchStack implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(BenchStack.class);

  private final Path dir;
  private final boolean keep;
  private final EmbeddedPostgresServer postgres;
  private final EmbeddedKafkaBroker kafka;
  private final Map<String, String> pgSettings;

  private BenchStack(Path dir, boolean keep, EmbeddedPostgresServer postgres, EmbeddedKafkaBroker kafka, Map<String, String> pgSettings) {
    this.dir = dir;
    this.keep = keep;
    this.postgres = postgres;
    this.kafka = kafka;
    this.pgSettings = pgSettings;
  }

  /** Starts PostgreSQL and Kafka under {@code dir}, which must be new or empty. */
  public static BenchStack start(Path dir, boolean keep) {
    try {
      Files.createDirectories(dir);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    EmbeddedPostgresServer postgres = EmbeddedPostgresServer.start(dir.resolve("pg"), 0, EmbeddedPostgresServer.Durability.DURABLE);
    EmbeddedKafkaBroker kafka = null;
    try {
      Map<String, String> settings = requireDurable(postgres.jdbcUrl());
      TallySchema.migrate(postgres.jdbcUrl(), EmbeddedPostgresServer.USER, "");
      kafka = EmbeddedKafkaBroker.start(dir.resolve("kafka"), 0);
      return new BenchStack(dir, keep, postgres, kafka, settings);
    } catch (RuntimeException | Error e) {
      if (kafka != null) {
        kafka.close();
      }
      postgres.close();
      throw e;
    }
  }

  /**
   * Fails unless commits really wait for the disk; turns on WAL I/O timing, which {@code bench redirect}
   * reads to tell commit cost apart from lock waits. Returns the settings, for the report.
   */
  private static Map<String, String> requireDurable(String jdbcUrl) {
    try (Connection c = DriverManager.getConnection(jdbcUrl, EmbeddedPostgresServer.USER, "");
        Statement s = c.createStatement()) {
      // Not on the command line, so ALTER SYSTEM takes effect with a reload (fsync must not be set this way).
      s.execute("ALTER SYSTEM SET track_wal_io_timing = on");
      s.execute("SELECT pg_reload_conf()");
      Map<String, String> settings = new java.util.LinkedHashMap<>();
      for (String name : List.of("server_version", "fsync", "synchronous_commit", "full_page_writes", "wal_sync_method",
          "shared_buffers", "max_connections", "track_wal_io_timing")) {
        try (ResultSet rs = s.executeQuery("SHOW " + name)) {
          rs.next();
          settings.put(name, rs.getString(1));
        }
      }
      if (!"on".equals(settings.get("fsync")) || !"on".equals(settings.get("synchronous_commit"))) {
        throw new IllegalStateException("the benchmark's PostgreSQL is not durable: " + settings);
      }
      return settings;
    } catch (SQLException e) {
      throw new IllegalStateException("cannot read PostgreSQL settings", e);
    }
  }

  public Path dir() {
    return dir;
  }

  public String jdbcUrl() {
    return postgres.jdbcUrl();
  }

  public String dbUser() {
    return EmbeddedPostgresServer.USER;
  }

  public Connection connect() throws SQLException {
    return DriverManager.getConnection(jdbcUrl(), dbUser(), "");
  }

  /** The postmaster's process id, for measuring PostgreSQL's CPU time. */
  public long postmasterPid() {
    try {
      return Long.parseLong(Files.readAllLines(dir.resolve("pg").resolve("postmaster.pid")).get(0).trim());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public Map<String, String> pgSettings() {
    return pgSettings;
  }

  public EmbeddedKafkaBroker kafka() {
    return kafka;
  }

  public String bootstrapServers() {
    return kafka.bootstrapServers();
  }

  public void createTopic(String name, int partitions) {
    kafka.createTopics(List.of(new NewTopic(name, partitions, (short) 1)
        .configs(Map.of("message.timestamp.type", "CreateTime", "retention.ms", "-1",
            "message.timestamp.after.max.ms", String.valueOf(ClickEventCodec.MAX_FUTURE_SKEW.toMillis())))));
  }

  @Override
  public void close() {
    try {
      kafka.close();
    } catch (RuntimeException e) {
      LOG.warn("error while stopping Kafka", e);
    }
    try {
      postgres.close();
    } catch (RuntimeException e) {
      LOG.warn("error while stopping PostgreSQL", e);
    }
    if (!keep) {
      delete(dir);
    }
  }

  static void delete(Path dir) {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(dir)) {
      paths.sorted(Comparator.reverseOrder()).forEach(p -> {
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
