package io.tally.redirect.links;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.tally.testing.PostgresExtension;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Tests for {@link KnownCodes} on a real PostgreSQL: the whole-set load, the notifications of the
 * links trigger, and what happens while the listening connection is gone.
 */
class KnownCodesITCase {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  private static final AtomicInteger CODES = new AtomicInteger();

  private final List<String> changed = new CopyOnWriteArrayList<>();

  /** While set, the listener cannot connect, as when PostgreSQL is out of its reach. */
  private final AtomicBoolean unreachable = new AtomicBoolean();

  private SimpleMeterRegistry registry;
  private KnownCodes codes;

  @BeforeEach
  void start() {
    registry = new SimpleMeterRegistry();
    codes = startCodes(Duration.ofMinutes(10));
  }

  @AfterEach
  void stop() {
    codes.close();
  }

  @Test
  void knowsEveryCodeInTheTableAndRefusesAlmostEveryOther() throws SQLException {
    String prefix = "known-" + CODES.incrementAndGet() + "-";
    insertMany(prefix, 5_000);
    codes.close();
    codes = startCodes(Duration.ofMinutes(10));
    assertThat(codes.awaitCurrent(Duration.ofSeconds(30))).isTrue();

    for (int i = 0; i < 5_000; i++) {
      assertThat(codes.mightExist(prefix + i)).as(prefix + i).isTrue();
    }
    int falsePositives = 0;
    int tries = 20_000;
    for (int i = 0; i < tries; i++) {
      if (codes.mightExist("never-" + Long.toString(ThreadLocalRandom.current().nextLong(), 36))) {
        falsePositives++;
      }
    }
    assertThat(falsePositives).isLessThanOrEqualTo(tries / 100);
    assertThat(registry.get("tally.link.codes.unknown.answered").counter().count())
        .isEqualTo(tries - falsePositives);
    assertThat(codes.size()).isGreaterThanOrEqualTo(5_000);
    assertThat(codes.bytes()).isPositive();
  }

  @Test
  void learnsOfALinkCreatedElsewhereFromItsNotification() throws SQLException {
    assertThat(codes.awaitCurrent(Duration.ofSeconds(30))).isTrue();
    String code = "elsewhere-" + CODES.incrementAndGet();
    assertThat(codes.mightExist(code)).isFalse();

    sql("INSERT INTO links (code, url) VALUES ('" + code + "', 'https://example.com/')");

    await().atMost(Duration.ofSeconds(5)).until(() -> codes.mightExist(code));
    assertThat(changed).contains(code);
    assertThat(registry.get("tally.link.codes.reloads").counter().count()).isEqualTo(1);
  }

  @Test
  void tellsOfAChangedLinkSoThatCachesForgetIt() throws SQLException {
    // Listening first: a link inserted before the LISTEN is only in the load, never notified.
    assertThat(codes.awaitCurrent(Duration.ofSeconds(30))).isTrue();
    String code = "changed-" + CODES.incrementAndGet();
    sql("INSERT INTO links (code, url) VALUES ('" + code + "', 'https://example.com/')");
    await().atMost(Duration.ofSeconds(5)).until(() -> changed.contains(code));
    changed.clear();

    sql("UPDATE links SET disabled_at = now() WHERE code = '" + code + "'");

    await().atMost(Duration.ofSeconds(5)).until(() -> changed.contains(code));
  }

  @Test
  void asksTheDatabaseWhileNotListeningAndCatchesUpAfter() throws SQLException {
    assertThat(codes.awaitCurrent(Duration.ofSeconds(30))).isTrue();
    String missed = "missed-" + CODES.incrementAndGet();

    unreachable.set(true);
    try (Connection admin = connect();
        Statement statement = admin.createStatement()) {
      // The listener's connection dies, and a link is created before it can listen again: its
      // notification is lost, and only the reload after reconnecting can know it.
      statement.execute(
          "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
              + " WHERE application_name = 'known-codes-test'");
      statement.execute(
          "INSERT INTO links (code, url) VALUES ('" + missed + "', 'https://example.com/')");
    }
    await().atMost(Duration.ofSeconds(5)).until(() -> !codes.isCurrent());
    assertThat(codes.mightExist("unknown-while-away")).isTrue();

    unreachable.set(false);
    await().atMost(Duration.ofSeconds(15)).until(codes::isCurrent);
    assertThat(codes.mightExist(missed)).isTrue();
    assertThat(codes.mightExist("unknown-while-away")).isFalse();
    assertThat(registry.get("tally.link.codes.reloads").counter().count()).isEqualTo(2);
  }

  @Test
  void reloadsWhenTheTableOutgrowsTheFilter() throws SQLException {
    assertThat(codes.awaitCurrent(Duration.ofSeconds(30))).isTrue();
    double reloads = registry.get("tally.link.codes.reloads").counter().count();
    long bytesBefore = codes.bytes();

    // More codes than the smallest filter has room for, each notified.
    insertMany("grown-" + CODES.incrementAndGet() + "-", 130_000);

    await()
        .atMost(Duration.ofSeconds(60))
        .until(() -> registry.get("tally.link.codes.reloads").counter().count() > reloads);
    await().atMost(Duration.ofSeconds(30)).until(() -> codes.bytes() > bytesBefore);
  }

  private KnownCodes startCodes(Duration reloadEvery) {
    return KnownCodes.start(
        () -> {
          if (unreachable.get()) {
            throw new SQLException("PostgreSQL out of reach (test)");
          }
          Connection c = connect();
          try (Statement s = c.createStatement()) {
            s.execute("SET application_name = 'known-codes-test'");
          }
          return c;
        },
        reloadEvery,
        changed::add,
        registry);
  }

  private static Connection connect() throws SQLException {
    return DriverManager.getConnection(PG.jdbcUrl(), PG.user(), PG.password());
  }

  private static void insertMany(String prefix, int count) throws SQLException {
    try (Connection c = connect();
        PreparedStatement ps =
            c.prepareStatement(
                "INSERT INTO links (code, url) SELECT ? || g, 'https://example.com/'"
                    + " FROM generate_series(0, ? - 1) g")) {
      ps.setString(1, prefix);
      ps.setInt(2, count);
      ps.executeUpdate();
    }
  }

  private static void sql(String statement) throws SQLException {
    try (Connection c = connect();
        Statement s = c.createStatement()) {
      s.execute(statement);
    }
  }
}
