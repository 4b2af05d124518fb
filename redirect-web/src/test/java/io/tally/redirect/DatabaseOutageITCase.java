package io.tally.redirect;

import static io.tally.redirect.RunningRedirectWeb.json;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.tally.embedded.EmbeddedPostgresServer;
import io.tally.embedded.PostgresPause;
import io.tally.redirect.links.LinkCache;
import io.tally.redirect.links.LinkStore;
import io.tally.testing.KafkaExtension;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Map;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Tests for {@link LinkCache}, {@link LinkStore} and {@code /health} inside a running redirect-web
 * while its PostgreSQL stops answering: every PostgreSQL process is paused with {@code SIGSTOP},
 * which keeps the TCP connections open, as a hung host or a network partition does, then resumed
 * with {@code SIGCONT}. The server has a PostgreSQL of its own, so no other test class sees the
 * pause.
 */
class DatabaseOutageITCase {

  @RegisterExtension static final KafkaExtension KAFKA = new KafkaExtension();

  private static final Duration REFRESH = Duration.ofMillis(300);

  /**
   * Well under the 5 s a client or load balancer waits; a redirect that went to PostgreSQL would
   * hang.
   */
  private static final Duration QUICKLY = Duration.ofMillis(1500);

  /** Far less than the lookup timeout: not waiting for PostgreSQL at all. */
  private static final Duration AT_ONCE = Duration.ofMillis(750);

  /**
   * A miss or a health probe waits for PostgreSQL for the lookup timeout (1 s) at most, plus the
   * pool's wait.
   */
  private static final Duration BOUNDED = Duration.ofMillis(3500);

  /** More than the one test's own unknown codes ask for before it invents codes in a loop. */
  private static final int UNKNOWN_CODES_PER_MINUTE = 12;

  private static Path dataDir;
  private static EmbeddedPostgresServer postgres;
  private static RunningRedirectWeb web;

  @BeforeAll
  static void start() throws IOException {
    Path root = Path.of("target", "embedded").toAbsolutePath();
    Files.createDirectories(root);
    dataDir = Files.createTempDirectory(root, "pg-outage-");
    postgres = EmbeddedPostgresServer.start(dataDir, 0, EmbeddedPostgresServer.Durability.FAST);
    Map<String, String> env =
        RunningRedirectWeb.environment(
            postgres.jdbcUrl(),
            EmbeddedPostgresServer.USER,
            "",
            KAFKA,
            KAFKA.newTopic("clicks-db-outage", 1));
    env.put("TALLY_LINK_REFRESH_MS", String.valueOf(REFRESH.toMillis()));
    env.put("TALLY_PG_LOOKUP_TIMEOUT_MS", "1000");
    env.put("TALLY_LIMIT_UNKNOWN_CODES_PER_MINUTE", String.valueOf(UNKNOWN_CODES_PER_MINUTE));
    web = RunningRedirectWeb.start(env);
  }

  @AfterAll
  static void stop() {
    if (web != null) {
      web.close();
    }
    if (postgres != null) {
      postgres.close();
    }
  }

  @Test
  void knownLinksKeepRedirectingWhilePostgresHangsAndAreReadAgainWhenItAnswers() throws Exception {
    String code = web.createLink("https://example.com/created");
    assertThat(web.get("/" + code).statusCode()).isEqualTo(302);
    // Changed elsewhere, as through another instance: its notification has the link read again in
    // the background and served as it was until then, never dropped from memory, where an outage
    // would find it missing.
    double missesBefore = misses();
    changeElsewhere(code, "https://example.com/before-the-outage");
    await("the change read again")
        .atMost(Duration.ofSeconds(10))
        .pollInterval(Duration.ofMillis(100))
        .untilAsserted(
            () ->
                assertThat(web.get("/" + code).headers().firstValue("Location"))
                    .contains("https://example.com/before-the-outage"));
    assertThat(misses()).as("looked up in PostgreSQL on a request again").isEqualTo(missesBefore);
    double failuresBefore = web.metric("tally_link_cache_refresh_failures_total");

    PostgresPause pause = PostgresPause.of(dataDir);
    assertThat(pause.pause()).as("backends, checkpointer, WAL writer …").isNotEmpty();
    try {
      // Past the refresh interval: every request for the link now wants it read again, which cannot
      // be done.
      RunningRedirectWeb.sleep(REFRESH.multipliedBy(2));
      for (int i = 0; i < 5; i++) {
        HttpResponse<String> redirect = quickly(QUICKLY, () -> web.get("/" + code));
        assertThat(redirect.statusCode()).as(redirect.body()).isEqualTo(302);
        assertThat(redirect.headers().firstValue("Location"))
            .contains("https://example.com/before-the-outage");
      }
      await("a refresh that failed")
          .atMost(Duration.ofSeconds(10))
          .pollInterval(Duration.ofMillis(200))
          .untilAsserted(
              () -> {
                assertThat(quickly(QUICKLY, () -> web.get("/" + code)).statusCode()).isEqualTo(302);
                assertThat(web.metric("tally_link_cache_refresh_failures_total"))
                    .isGreaterThan(failuresBefore);
              });
      assertThat(quickly(QUICKLY, () -> web.get("/" + code)).statusCode())
          .as("still served after it")
          .isEqualTo(302);

      // Health answers at once from the background probe, which finds the outage within a probe.
      await("health reporting the outage")
          .atMost(BOUNDED.plus(Readiness.PROBE_EVERY).multipliedBy(2))
          .pollInterval(Duration.ofMillis(100))
          .untilAsserted(
              () -> {
                HttpResponse<String> health = quickly(QUICKLY, () -> web.get("/health"));
                assertThat(health.statusCode()).as(health.body()).isEqualTo(200);
                JsonNode status = json(health);
                assertThat(status.get("status").asText()).isEqualTo("serving");
                assertThat(status.get("database").asText()).isEqualTo("down");
                assertThat(status.get("kafka").asText()).isEqualTo("up");
              });

      // While the set of codes is current an unknown code is answered 404 from memory, outage or
      // not; once its listener finds its connection dead, codes are looked up again, and fail.
      await("the set of codes no longer current")
          .atMost(Duration.ofSeconds(15))
          .pollInterval(Duration.ofMillis(200))
          .until(() -> web.metric("tally_link_codes_current") == 0.0);
      HttpResponse<String> unknown = quickly(BOUNDED, () -> web.get("/neverCached1"));
      assertThat(unknown.statusCode()).as(unknown.body()).isEqualTo(503);
      assertThat(json(unknown).get("error").asText()).isEqualTo("the link database is unavailable");
      // Lookups just failed: the next ones do not wait for PostgreSQL again, so uncached codes
      // cannot tie up the request threads that cached links need.
      for (int i = 0; i < 5; i++) {
        String code2 = "neverCachedEither" + i;
        HttpResponse<String> another = quickly(AT_ONCE, () -> web.get("/" + code2));
        assertThat(another.statusCode()).as(another.body()).isEqualTo(503);
      }
      // A client inventing codes meets its limit before the lookup, not after a lookup that fails:
      // past it, 429 at once.
      HttpResponse<String> invented = null;
      for (int i = 0; i <= UNKNOWN_CODES_PER_MINUTE; i++) {
        String code3 = "inventedCode" + i;
        invented = quickly(BOUNDED, () -> web.get("/" + code3));
        if (invented.statusCode() == 429) {
          break;
        }
        assertThat(invented.statusCode()).as(invented.body()).isEqualTo(503);
      }
      assertThat(invented.statusCode()).as(invented.body()).isEqualTo(429);
      assertThat(quickly(AT_ONCE, () -> web.get("/inventedAgain")).statusCode()).isEqualTo(429);
      assertThat(quickly(QUICKLY, () -> web.get("/" + code)).statusCode())
          .as("a link in memory is no unknown code")
          .isEqualTo(302);
    } finally {
      pause.resume();
    }

    changeElsewhere(code, "https://example.com/after");
    await("the link read again")
        .atMost(Duration.ofSeconds(20))
        .pollInterval(Duration.ofMillis(200))
        .untilAsserted(
            () ->
                assertThat(web.get("/" + code).headers().firstValue("Location"))
                    .contains("https://example.com/after"));
    await("the database reported up")
        .atMost(Duration.ofSeconds(20))
        .pollInterval(Duration.ofMillis(200))
        .untilAsserted(
            () -> assertThat(json(web.get("/health")).get("database").asText()).isEqualTo("up"));
    // Answered from memory again, once the bucket this client ran dry has a token back.
    await("an unknown code answered 404")
        .atMost(Duration.ofSeconds(20))
        .pollInterval(Duration.ofSeconds(1))
        .until(() -> web.get("/neverCached2").statusCode() == 404);
  }

  /** Changes a link's URL behind the server's back, as another instance would. */
  private static void changeElsewhere(String code, String url) throws SQLException {
    try (Connection c =
            DriverManager.getConnection(postgres.jdbcUrl(), EmbeddedPostgresServer.USER, "");
        PreparedStatement ps = c.prepareStatement("UPDATE links SET url = ? WHERE code = ?")) {
      ps.setString(1, url);
      ps.setString(2, code);
      assertThat(ps.executeUpdate()).isEqualTo(1);
    }
  }

  private static double misses() {
    return web.series("cache_gets_total").getOrDefault("cache=\"links\",result=\"miss\"", 0.0);
  }

  /** Runs a request and checks it was answered within {@code bound}. */
  private static HttpResponse<String> quickly(
      Duration bound, Supplier<HttpResponse<String>> request) {
    long start = System.nanoTime();
    HttpResponse<String> response = request.get();
    assertThat(Duration.ofNanos(System.nanoTime() - start))
        .as("answered within %s", bound)
        .isLessThan(bound);
    return response;
  }
}
