package io.tally.redirect.links;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.tally.testing.PostgresExtension;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Tests for {@link LinkCache} in front of a {@link LinkStore} on a real PostgreSQL. */
class LinkCacheITCase {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  private static final AtomicInteger CODES = new AtomicInteger();

  private static HikariDataSource dataSource;

  private LinkStore store;
  private SimpleMeterRegistry registry;
  private LinkCache cache;
  private String code;

  @AfterEach
  void closeCache() {
    cache.close();
  }

  @BeforeAll
  static void openPool() {
    HikariConfig pool = new HikariConfig();
    pool.setJdbcUrl(PG.jdbcUrl());
    pool.setUsername(PG.user());
    pool.setPassword(PG.password());
    pool.setMaximumPoolSize(4);
    dataSource = new HikariDataSource(pool);
  }

  @AfterAll
  static void closePool() {
    dataSource.close();
  }

  @BeforeEach
  void setUp() {
    store = new LinkStore(dataSource, Duration.ofSeconds(1));
    registry = new SimpleMeterRegistry();
    cache = new LinkCache(store, registry, Duration.ofSeconds(30), Duration.ofHours(6));
    code = "cache-" + CODES.incrementAndGet() + "-" + Long.toString(System.nanoTime(), 36);
  }

  @Test
  void servesALinkFromMemoryAfterTheFirstLookup() throws SQLException {
    store.insert(code, "https://example.com/old");
    assertThat(cache.get(code))
        .hasValueSatisfying(l -> assertThat(l.url()).isEqualTo("https://example.com/old"));

    // Changed behind the cache's back, as another instance would.
    sql("UPDATE links SET url = 'https://example.com/new' WHERE code = ?");

    assertThat(cache.get(code))
        .hasValueSatisfying(l -> assertThat(l.url()).isEqualTo("https://example.com/old"));
  }

  @Test
  void readsTheLinkAgainOnceInvalidated() throws SQLException {
    store.insert(code, "https://example.com/old");
    cache.get(code);
    sql("UPDATE links SET url = 'https://example.com/new' WHERE code = ?");

    cache.invalidate(code);

    assertThat(cache.get(code))
        .hasValueSatisfying(l -> assertThat(l.url()).isEqualTo("https://example.com/new"));
  }

  @Test
  void remembersThatACodeIsUnknown() {
    // A flood of random codes must not become a flood of queries.
    assertThat(cache.get(code)).isEmpty();
    store.insert(code, "https://example.com/late");

    assertThat(cache.get(code)).isEmpty();

    cache.invalidate(code);
    assertThat(cache.get(code)).isPresent();
  }

  @Test
  void seesADisabledLinkAfterInvalidation() {
    store.insert(code, "https://example.com/");
    assertThat(cache.get(code)).hasValueSatisfying(l -> assertThat(l.disabled()).isFalse());
    store.disable(code);

    cache.invalidate(code);

    assertThat(cache.get(code)).hasValueSatisfying(l -> assertThat(l.disabled()).isTrue());
  }

  @Test
  void countsItsHitsAndMisses() {
    store.insert(code, "https://example.com/");

    cache.get(code);
    cache.get(code);
    cache.get(code);

    assertThat(
            registry
                .get("cache.gets")
                .tag("cache", "links")
                .tag("result", "miss")
                .functionCounter()
                .count())
        .isEqualTo(1);
    assertThat(
            registry
                .get("cache.gets")
                .tag("cache", "links")
                .tag("result", "hit")
                .functionCounter()
                .count())
        .isEqualTo(2);
  }

  @Test
  void unknownCodesDoNotPushKnownLinksOutOfMemory() {
    cache.close();
    registry = new SimpleMeterRegistry();
    // Evictions run within each write, so the caches have settled when the requests below are done.
    cache =
        new LinkCache(
            store,
            registry,
            Duration.ofSeconds(30),
            Duration.ofHours(6),
            100 * 1024,
            100,
            Runnable::run);
    List<String> known = new ArrayList<>();
    for (int i = 0; i < 50; i++) {
      known.add(code + "-k" + i);
      store.insert(known.get(i), "https://example.com/" + i);
      cache.get(known.get(i));
    }
    // Random codes, each asked for a few times, as a scanner retries: more often than the links
    // were.
    for (int round = 0; round < 3; round++) {
      for (int i = 0; i < 1_000; i++) {
        assertThat(cache.get(code + "-unknown-" + i)).isEmpty();
      }
    }
    double missesBefore = misses();

    known.forEach(cache::get);

    assertThat(misses() - missesBefore).as("known links read from PostgreSQL again").isZero();
  }

  @Test
  void longUrlsFillTheCacheByTheirBytesNotByTheirNumber() {
    cache.close();
    registry = new SimpleMeterRegistry();
    long bound = 1024 * 1024;
    cache =
        new LinkCache(
            store,
            registry,
            Duration.ofSeconds(30),
            Duration.ofHours(6),
            bound,
            100,
            Runnable::run);
    String longPath = "a".repeat(2_000);
    for (int i = 0; i < 1_000; i++) {
      store.insert(code + "-long" + i, "https://example.com/" + longPath + i);
      assertThat(cache.get(code + "-long" + i)).isPresent();
    }

    // A thousand links of 2 KB URLs would take about 4 MB at two bytes a character.
    assertThat(cache.bytesHeld()).isPositive().isLessThanOrEqualTo(bound);
    assertThat(registry.get("tally.link.cache.bytes").gauge().value())
        .isEqualTo((double) cache.bytesHeld());
    assertThat(cache.get(code + "-long999")).as("the newest link is still served").isPresent();
  }

  @Test
  void servesALinkThatIsDueForRefreshAtOnceAndReadsItAgainInTheBackground() throws SQLException {
    cache.close();
    registry = new SimpleMeterRegistry();
    cache = new LinkCache(store, registry, Duration.ofMillis(200), Duration.ofHours(6));
    store.insert(code, "https://example.com/old");
    cache.get(code);
    sql("UPDATE links SET url = 'https://example.com/new' WHERE code = ?");

    await()
        .atMost(Duration.ofSeconds(10))
        .pollInterval(Duration.ofMillis(50))
        .untilAsserted(
            () ->
                assertThat(cache.get(code))
                    .hasValueSatisfying(
                        l -> assertThat(l.url()).isEqualTo("https://example.com/new")));
    assertThat(misses())
        .as("every lookup answered from memory; the new URL came by a refresh")
        .isEqualTo(1);
  }

  private double misses() {
    return registry
        .get("cache.gets")
        .tag("cache", "links")
        .tag("result", "miss")
        .functionCounter()
        .count();
  }

  private void sql(String statement) throws SQLException {
    try (Connection c = PG.connect();
        PreparedStatement ps = c.prepareStatement(statement)) {
      ps.setString(1, code);
      assertThat(ps.executeUpdate()).isEqualTo(1);
    }
  }
}
