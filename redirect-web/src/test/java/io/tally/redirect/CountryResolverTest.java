package io.tally.redirect;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Tests for {@link CountryResolver}, reading a real MaxMind-format file with the real reader. */
class CountryResolverTest {

  @TempDir Path dir;
  private CountryResolver resolver;

  @BeforeEach
  void setUp() throws Exception {
    Path db =
        new TinyMmdb()
            .network("203.0.113.0/24", "JP")
            .network("198.51.100.0/25", "de")
            .network("127.0.0.0/8", "ZZ")
            .writeTo(dir.resolve("c.mmdb"));
    resolver = CountryResolver.withDatabase(db);
  }

  @AfterEach
  void tearDown() {
    resolver.close();
  }

  @Test
  void looksTheAddressUpInTheDatabase() {
    assertThat(resolver.country("203.0.113.77", null)).isEqualTo("JP");
    assertThat(resolver.country("198.51.100.5", null)).isEqualTo("DE");
  }

  @Test
  void addressesTheDatabaseDoesNotKnowAreUnknown() {
    assertThat(resolver.country("198.51.100.200", null)).isEqualTo("unknown");
    assertThat(resolver.country("192.0.2.1", null)).isEqualTo("unknown");
    assertThat(resolver.country("2001:db8::1", null))
        .as("IPv6 against an IPv4 database")
        .isEqualTo("unknown");
  }

  @Test
  void neverResolvesHostNames() {
    // localhost would resolve, without a network, to 127.0.0.1, which the database knows.
    assertThat(resolver.country("127.0.0.1", null)).isEqualTo("ZZ");
    assertThat(resolver.country("localhost", null)).isEqualTo("unknown");
    assertThat(resolver.country("cafe.de", null)).isEqualTo("unknown");
  }

  @Test
  void readsAnIpv6PeerAsJettyWritesIt() {
    assertThat(resolver.country("[::ffff:203.0.113.77]", null)).isEqualTo("JP");
  }

  @Test
  void aTrustedHeaderWinsOverTheDatabase() {
    assertThat(resolver.country("203.0.113.77", "fr")).isEqualTo("FR");
    assertThat(resolver.country("203.0.113.77", "not-a-country")).isEqualTo("JP");
  }

  @Test
  void withoutADatabaseOnlyTheHeaderCounts() {
    CountryResolver headerOnly = CountryResolver.headerOnly();
    assertThat(headerOnly.country("203.0.113.77", null)).isEqualTo("unknown");
    assertThat(headerOnly.country("203.0.113.77", "CH")).isEqualTo("CH");
  }
}
