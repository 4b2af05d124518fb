package io.tally.redirect;

import static io.tally.redirect.RunningRedirectWeb.API_KEY;
import static io.tally.redirect.RunningRedirectWeb.OTHER_API_KEY;
import static io.tally.redirect.RunningRedirectWeb.READ_API_KEY;
import static io.tally.redirect.RunningRedirectWeb.json;
import static org.assertj.core.api.Assertions.assertThat;

import io.tally.testing.KafkaExtension;
import io.tally.testing.PostgresExtension;
import io.tally.testing.RedisServer;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What one client may ask: its unknown codes and API requests per address (as seen behind a trusted
 * proxy), its links created and stats read per key, each answered 429 with when to try again once
 * over; the scopes of keys; and the buckets shared by two replicas through a real Redis.
 */
class RateLimitsITCase {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();
  @RegisterExtension static final KafkaExtension KAFKA = new KafkaExtension();

  private static final AtomicInteger CLIENTS = new AtomicInteger(10);

  /** A client address of its own for each test, sent through the trusted loopback proxy. */
  private static String[] fromNewClient() {
    return new String[] {"X-Forwarded-For", "198.51.100." + CLIENTS.incrementAndGet()};
  }

  private static Map<String, String> environment(String unknownCodes, String api) {
    Map<String, String> env =
        RunningRedirectWeb.environment(PG, KAFKA, KAFKA.newTopic("clicks-limits", 1));
    env.put("TALLY_TRUSTED_PROXIES", "127.0.0.1, ::1");
    env.put("TALLY_LIMIT_UNKNOWN_CODES_PER_MINUTE", unknownCodes);
    env.put("TALLY_LIMIT_API_PER_MINUTE", api);
    env.put("TALLY_LIMIT_CREATE_PER_MINUTE", "3");
    env.put("TALLY_LIMIT_STATS_PER_MINUTE", "4");
    return env;
  }

  private static void assertRefused(HttpResponse<String> response, String policy, long quota) {
    assertThat(response.statusCode()).as(response.body()).isEqualTo(429);
    long retryAfter = Long.parseLong(response.headers().firstValue("Retry-After").orElseThrow());
    assertThat(retryAfter).isBetween(1L, 60L);
    assertThat(response.headers().firstValue("RateLimit-Policy"))
        .contains("\"" + policy + "\";q=" + quota + ";w=60");
    assertThat(response.headers().firstValue("RateLimit"))
        .contains("\"" + policy + "\";r=0;t=" + retryAfter);
    assertThat(json(response).get("error").asText())
        .startsWith("over the limit of " + quota + " " + policy + " requests a minute");
  }

  private static String[] withKey(String key, String... more) {
    String[] headers = new String[more.length + 2];
    headers[0] = "Authorization";
    headers[1] = "Bearer " + key;
    System.arraycopy(more, 0, headers, 2, more.length);
    return headers;
  }

  @Nested
  @TestInstance(TestInstance.Lifecycle.PER_CLASS)
  class OnOneReplica {

    private RunningRedirectWeb web;

    @BeforeAll
    void start() {
      web = RunningRedirectWeb.start(environment("5", "30"));
    }

    @AfterAll
    void stop() {
      web.close();
    }

    @Test
    void refusesAClientsUnknownCodesOverItsLimitButNotItsLinksNorOtherClients() {
      String link = web.createLink("https://example.com/limited");
      String[] client = fromNewClient();
      for (int i = 0; i < 5; i++) {
        assertThat(web.get("/nope-" + UUID.randomUUID(), client).statusCode()).isEqualTo(404);
      }
      double refusedBefore =
          web.series("tally_rate_limited_total").getOrDefault("limit=\"unknown-codes\"", 0.0);

      assertRefused(web.get("/nope-" + UUID.randomUUID(), client), "unknown-codes", 5);
      assertThat(web.get("/" + link, client).statusCode())
          .as("a real link is never limited")
          .isEqualTo(302);
      assertThat(web.get("/nope-" + UUID.randomUUID(), fromNewClient()).statusCode())
          .as("another client")
          .isEqualTo(404);
      assertThat(
              web.series("tally_rate_limited_total").getOrDefault("limit=\"unknown-codes\"", 0.0))
          .isEqualTo(refusedBefore + 1);
      assertThat(web.series("tally_redirects_total")).containsKey("status=\"429\"");
    }

    @Test
    void limitsLinkCreationPerKey() {
      String body = "{\"url\":\"https://example.com/created\"}";
      for (int i = 0; i < 3; i++) {
        assertThat(
                web.post(
                        "/api/links",
                        body,
                        withKey(OTHER_API_KEY, "Content-Type", "application/json"))
                    .statusCode())
            .isEqualTo(201);
      }
      assertRefused(
          web.post("/api/links", body, withKey(OTHER_API_KEY, "Content-Type", "application/json")),
          "create",
          3);
      assertThat(
              web.post(
                      "/api/links",
                      body,
                      withKey(
                          API_KEY,
                          "X-Forwarded-For",
                          "198.51.100.250",
                          "Content-Type",
                          "application/json"))
                  .statusCode())
          .as("another key")
          .isEqualTo(201);
    }

    @Test
    void limitsStatsPerKeyAndLetsAReadKeyReadButNotWrite() {
      String link = web.createLink("https://example.com/read-only");
      for (int i = 0; i < 4; i++) {
        assertThat(web.get("/api/links/" + link + "/stats", withKey(READ_API_KEY)).statusCode())
            .isEqualTo(200);
      }
      assertRefused(web.get("/api/links/" + link + "/stats", withKey(READ_API_KEY)), "stats", 4);

      HttpResponse<String> create =
          web.post(
              "/api/links",
              "{\"url\":\"https://example.com/x\"}",
              withKey(READ_API_KEY, "Content-Type", "application/json"));
      assertThat(create.statusCode()).isEqualTo(403);
      assertThat(json(create).get("error").asText())
          .isEqualTo("this API key may only read; this needs a write key");
      assertThat(web.delete("/api/links/" + link, withKey(READ_API_KEY)).statusCode())
          .isEqualTo(403);
      assertThat(web.get("/" + link).statusCode()).as("still enabled").isEqualTo(302);
    }

    @Test
    void limitsEveryApiRequestPerAddress() {
      String[] client = fromNewClient();
      int answered = 0;
      HttpResponse<String> last = null;
      for (int i = 0; i < 40 && (last == null || last.statusCode() != 429); i++) {
        last = web.get("/api/links/unknown-" + i, client);
        answered++;
      }
      assertThat(answered).as("30 answered, the 31st refused").isEqualTo(31);
      assertRefused(last, "api", 30);
    }
  }

  @Nested
  @TestInstance(TestInstance.Lifecycle.PER_CLASS)
  class OnTwoReplicasSharingRedis {

    private RedisServer redis;
    private RunningRedirectWeb first;
    private RunningRedirectWeb second;

    @BeforeAll
    void start() throws Exception {
      redis = RedisServer.start(Files.createTempDirectory(Path.of("target"), "redis"));
      Map<String, String> env = environment("6", "0");
      env.put("TALLY_REDIS_URL", redis.url());
      first = RunningRedirectWeb.start(env);
      second = RunningRedirectWeb.start(env);
    }

    @AfterAll
    void stop() {
      first.close();
      second.close();
      redis.close();
    }

    @Test
    void countsOneClientAgainstOneLimitWhicheverReplicaAnswers() {
      String[] client = fromNewClient();
      for (int i = 0; i < 3; i++) {
        assertThat(first.get("/nope-" + UUID.randomUUID(), client).statusCode()).isEqualTo(404);
        assertThat(second.get("/nope-" + UUID.randomUUID(), client).statusCode()).isEqualTo(404);
      }
      assertRefused(first.get("/nope-" + UUID.randomUUID(), client), "unknown-codes", 6);
      assertRefused(second.get("/nope-" + UUID.randomUUID(), client), "unknown-codes", 6);
    }

    @Test
    void answersAtOnceWhileRedisHangsWithThisReplicasOwnBuckets() throws Exception {
      String[] client = fromNewClient();
      double failuresBefore = first.metric("tally_rate_limit_redis_failures_total");
      redis.pause();
      try {
        long start = System.nanoTime();
        for (int i = 0; i < 6; i++) {
          assertThat(first.get("/nope-" + UUID.randomUUID(), client).statusCode()).isEqualTo(404);
        }
        assertRefused(first.get("/nope-" + UUID.randomUUID(), client), "unknown-codes", 6);
        assertThat(Duration.ofNanos(System.nanoTime() - start))
            .as("one Redis timeout, then a second of local buckets")
            .isLessThan(Duration.ofSeconds(2));
        assertThat(first.metric("tally_rate_limit_redis_failures_total"))
            .isGreaterThan(failuresBefore);
      } finally {
        redis.resume();
      }
    }
  }
}
