package io.tally.redirect;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.tally.testing.PostgresExtension;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.ds.PGSimpleDataSource;

/** Tests for {@link LinkCache} in front of a {@link LinkStore} on a real PostgreSQL. */
class LinkCacheITCase {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  private static final AtomicInteger CODES = new AtomicInteger();

  private LinkStore store;
  private SimpleMeterRegistry registry;
  private LinkCache cache;
  private String code;

  @BeforeEach
  void setUp() {
    PGSimpleDataSource dataSource = new PGSimpleDataSource();
    dataSource.setURL(PG.jdbcUrl());
    dataSource.setUser(PG.user());
    dataSource.setPassword(PG.password());
    store = new LinkStore(dataSource);
    registry = new SimpleMeterRegistry();
    cache = new LinkCache(store, registry);
    code = "cache-" + CODES.incrementAndGet() + "-" + Long.toString(System.nanoTime(), 36);
  }

  @Test
  void servesALinkFromMemoryAfterTheFirstLookup() throws SQLException {
    store.insert(code, "https://example.com/old");
    assertThat(cache.get(code)).hasValueSatisfying(l -> assertThat(l.url()).isEqualTo("https://example.com/old"));

    // Changed behind the cache's back, as another instance would.
    sql("UPDATE links SET url = 'https://example.com/new' WHERE code = ?");

    assertThat(cache.get(code)).hasValueSatisfying(l -> assertThat(l.url()).isEqualTo("https://example.com/old"));
  }

  @Test
  void readsTheLinkAgainOnceInvalidated() throws SQLException {
    store.insert(code, "https://example.com/old");
    cache.get(code);
    sql("UPDATE links SET url = 'https://example.com/new' WHERE code = ?");

    cache.invalidate(code);

    assertThat(cache.get(code)).hasValueSatisfying(l -> assertThat(l.url()).isEqualTo("https://example.com/new"));
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

    assertThat(registry.get("cache.gets").tag("cache", "links").tag("result", "miss").functionCounter().count())
        .isEqualTo(1);
    assertThat(registry.get("cache.gets").tag("cache", "links").tag("result", "hit").functionCounter().count())
        .isEqualTo(2);
  }

  private void sql(String statement) throws SQLException {
    try (Connection c = PG.connect(); PreparedStatement ps = c.prepareStatement(statement)) {
      ps.setString(1, code);
      assertThat(ps.executeUpdate()).isEqualTo(1);
    }
  }
}
