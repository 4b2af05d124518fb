package io.tally.redirect;

import static io.tally.redirect.RunningRedirectWeb.API_KEY;
import static io.tally.redirect.RunningRedirectWeb.json;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.javalin.http.HttpStatus;
import io.tally.event.ClickEvent;
import io.tally.event.ClickEventCodec;
import io.tally.event.Decoded;
import io.tally.testing.KafkaExtension;
import io.tally.testing.PostgresExtension;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Tests for {@link RedirectWebApp}'s routes, served by {@link RedirectWebServer} on a real
 * PostgreSQL and a real Kafka broker, down to the click events on the topic.
 */
class RedirectRoutesITCase {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();
  @RegisterExtension static final KafkaExtension KAFKA = new KafkaExtension();

  private static final String COUNTRY_HEADER = "CF-IPCountry";
  private static final String LOOPBACK = "127.0.0.1";
  private static final Duration EVENT_TIMEOUT = Duration.ofSeconds(30);
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final AtomicInteger CODES = new AtomicInteger();

  private static String topic;
  private static RunningRedirectWeb web;

  @BeforeAll
  static void startServer() throws Exception {
    topic = KAFKA.newTopic("clicks-routes", 2);
    Map<String, String> env = RunningRedirectWeb.environment(PG, KAFKA, topic);
    // The tests connect over loopback and play the proxy themselves.
    env.put("TALLY_TRUSTED_PROXIES", LOOPBACK);
    env.put("TALLY_COUNTRY_HEADER", COUNTRY_HEADER);
    Path geo = Files.createTempDirectory(Path.of("target"), "geo").resolve("country.mmdb");
    env.put(
        "TALLY_GEOIP_DB", new TinyMmdb().network("203.0.113.0/24", "JP").writeTo(geo).toString());
    web = RunningRedirectWeb.start(env);
    web.awaitProducerReady(web.createLink("https://example.com/warm-up"));
  }

  @AfterAll
  static void stopServer() {
    if (web != null) {
      web.close();
    }
  }

  private static boolean answersOnIpv6Loopback() {
    try (Socket socket = new Socket()) {
      socket.connect(new InetSocketAddress("::1", web.port()), 1000);
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  /** A custom code no other test uses. */
  private static String uniqueCode(String prefix) {
    return prefix + "-" + CODES.incrementAndGet() + "-" + Long.toString(System.nanoTime(), 36);
  }

  private static String auth(String key) {
    return "Bearer " + key;
  }

  private static HttpResponse<String> createLink(String body) {
    return web.post(
        "/api/links", body, "Authorization", auth(API_KEY), "Content-Type", "application/json");
  }

  private static HttpResponse<String> changeLink(String code, String body, String key) {
    return web.patch(
        "/api/links/" + code, body, "Authorization", auth(key), "Content-Type", "application/json");
  }

  private static double linkCacheMisses() {
    return web.series("cache_gets_total").getOrDefault("cache=\"links\",result=\"miss\"", 0.0);
  }

  private static double linkCacheHits() {
    return web.series("cache_gets_total").getOrDefault("cache=\"links\",result=\"hit\"", 0.0);
  }

  private static void assertJsonError(
      HttpResponse<String> response, int status, String messagePart) {
    assertThat(response.statusCode()).as(response.body()).isEqualTo(status);
    assertThat(response.headers().firstValue("Content-Type"))
        .hasValueSatisfying(t -> assertThat(t).startsWith("application/problem+json"));
    JsonNode body = json(response);
    assertThat(body.get("type").asText()).isEqualTo("about:blank");
    assertThat(body.get("title").asText()).isEqualTo(HttpStatus.forStatus(status).getMessage());
    assertThat(body.get("status").asInt()).isEqualTo(status);
    assertThat(body.get("detail").asText()).contains(messagePart);
    assertThat(body.get("error").asText()).isEqualTo(body.get("detail").asText());
    assertThat(body.size()).isEqualTo(5);
  }

  @Nested
  class LinkChanges {

    @Test
    void aChangedTargetIsTheNextRedirectsAndTagsAreTheKeyHoldersOnly() {
      String code = uniqueCode("change");
      createLink("{\"url\":\"https://example.com/wrong\",\"code\":\"" + code + "\"}");
      assertThat(web.get("/" + code).headers().firstValue("Location"))
          .hasValue("https://example.com/wrong");

      HttpResponse<String> changed =
          changeLink(
              code,
              "{\"url\":\"https://example.com/right\",\"tags\":[\"launch\",\"q4.ads\",\"launch\"]}",
              API_KEY);

      assertThat(changed.statusCode()).as(changed.body()).isEqualTo(200);
      JsonNode link = json(changed);
      assertThat(link.get("url").asText()).isEqualTo("https://example.com/right");
      assertThat(link.get("tags").toString()).isEqualTo("[\"launch\",\"q4.ads\"]");
      assertThat(web.get("/" + code).headers().firstValue("Location"))
          .as("the next redirect, on the replica that changed it")
          .hasValue("https://example.com/right");
      assertThat(json(web.get("/api/links/" + code, "Authorization", auth(API_KEY))).get("tags"))
          .hasSize(2);
      assertThat(json(web.get("/api/links/" + code)).has("tags"))
          .as("tags without a key")
          .isFalse();

      JsonNode tagsOnly = json(changeLink(code, "{\"tags\":[]}", API_KEY));
      assertThat(tagsOnly.get("tags")).isEmpty();
      assertThat(tagsOnly.get("url").asText())
          .as("what a change does not name stays")
          .isEqualTo("https://example.com/right");
    }

    @Test
    void anotherReplicaRedirectsToTheNewTargetOnceNotified() {
      String code = uniqueCode("elsewhere");
      createLink("{\"url\":\"https://example.com/before\",\"code\":\"" + code + "\"}");
      try (RunningRedirectWeb other =
          RunningRedirectWeb.start(RunningRedirectWeb.environment(PG, KAFKA, topic))) {
        assertThat(other.get("/" + code).headers().firstValue("Location"))
            .as("held in the other replica's memory from here on")
            .hasValue("https://example.com/before");

        assertThat(
                changeLink(code, "{\"url\":\"https://example.com/after\"}", API_KEY).statusCode())
            .isEqualTo(200);

        Awaitility.await()
            .atMost(Duration.ofSeconds(5))
            .pollInterval(Duration.ofMillis(20))
            .until(
                () ->
                    other
                        .get("/" + code)
                        .headers()
                        .firstValue("Location")
                        .orElse("")
                        .equals("https://example.com/after"));
      }
    }

    @Test
    void anExpiredLinkIsGoneCountedApartFromADisabledOne() {
      String code = uniqueCode("expiring");
      String past = Instant.now().minusSeconds(1).truncatedTo(ChronoUnit.SECONDS).toString();
      HttpResponse<String> created =
          createLink(
              "{\"url\":\"https://example.com/sale\",\"code\":\""
                  + code
                  + "\",\"expires_at\":\""
                  + past
                  + "\"}");
      assertThat(json(created).get("expires_at").asText()).isEqualTo(past);
      double expiredBefore = gone("expired");
      double disabledBefore = gone("disabled");

      assertJsonError(web.get("/" + code), 410, "link '" + code + "' expired at " + past);
      assertThat(gone("expired")).isEqualTo(expiredBefore + 1);
      assertThat(gone("disabled")).isEqualTo(disabledBefore);

      String later = Instant.now().plusSeconds(3600).truncatedTo(ChronoUnit.SECONDS).toString();
      assertThat(
              json(changeLink(code, "{\"expires_at\":\"" + later + "\"}", API_KEY))
                  .get("expires_at")
                  .asText())
          .isEqualTo(later);
      assertThat(web.get("/" + code).statusCode()).isEqualTo(302);
      assertThat(json(changeLink(code, "{\"expires_at\":null}", API_KEY)).has("expires_at"))
          .isFalse();
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(
        delimiter = '|',
        textBlock =
            """
            {}                                            | name at least one of url, tags and expires_at
            {"code":"other"}                              | can be changed, not 'code'
            {"url":"ftp://example.com/"}                  | http
            {"tags":"launch"}                             | tags must be an array of strings
            {"tags":["two words"]}                        | a tag must be 1 to 32 letters
            {"tags":["a","b","c","d","e","f","g","h","i","j","k"]} | at most 10 tags, not 11
            {"expires_at":"tomorrow"}                     | expires_at must be an ISO-8601 instant
            [1]                                           | request body must be a JSON object
            """)
    void aChangeItCannotMakeIsRefusedWithTheReason(String body, String reason) {
      String code = uniqueCode("refused");
      createLink("{\"url\":\"https://example.com/keep\",\"code\":\"" + code + "\"}");

      assertJsonError(changeLink(code, body, API_KEY), 400, reason);
      assertThat(web.get("/" + code).headers().firstValue("Location"))
          .hasValue("https://example.com/keep");
    }

    @Test
    void onlyAWriteKeyChangesALinkThatExists() {
      String code = uniqueCode("guarded");
      createLink("{\"url\":\"https://example.com/guarded\",\"code\":\"" + code + "\"}");
      String body = "{\"url\":\"https://example.com/taken-over\"}";

      assertThat(changeLink(code, body, RunningRedirectWeb.READ_API_KEY).statusCode())
          .isEqualTo(403);
      assertThat(
              web.patch("/api/links/" + code, body, "Content-Type", "application/json")
                  .statusCode())
          .isEqualTo(401);
      assertJsonError(changeLink("no-such-code", body, API_KEY), 404, "no link with code");
      assertThat(web.get("/" + code).headers().firstValue("Location"))
          .hasValue("https://example.com/guarded");
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(
        strings = {
          "{\"two words\"}",
          "{a,NULL}",
          "{a,b,c,d,e,f,g,h,i,j,k}",
          "{aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa}"
        })
    void theDatabaseRefusesTagsTheApiWouldRefuse(String tags) throws Exception {
      String code = uniqueCode("bounded");
      createLink("{\"url\":\"https://example.com/bounded\",\"code\":\"" + code + "\"}");
      try (Connection c = PG.connect();
          PreparedStatement update =
              c.prepareStatement("UPDATE links SET tags = ?::text[] WHERE code = ?")) {
        update.setString(1, tags);
        update.setString(2, code);
        assertThatThrownBy(update::executeUpdate)
            .isInstanceOf(SQLException.class)
            .hasMessageContaining("links_tags_bounded");
      }
    }

    private double gone(String reason) {
      return web.series("tally_redirects_gone_total")
          .getOrDefault("reason=\"" + reason + "\"", 0.0);
    }
  }

  @Nested
  class LinksApi {

    @Test
    void createsALinkWithAGeneratedCode() {
      Instant before = Instant.now();
      HttpResponse<String> response =
          createLink("{\"url\":\"https://example.com/a/page?x=1&y=2#top\"}");
      Instant after = Instant.now();

      assertThat(response.statusCode()).as(response.body()).isEqualTo(201);
      JsonNode link = json(response);
      String code = link.get("code").asText();
      assertThat(code).matches("[A-Za-z0-9]{8}");
      assertThat(response.headers().firstValue("Location")).contains("/api/links/" + code);
      assertThat(response.headers().firstValue("Content-Type"))
          .hasValueSatisfying(t -> assertThat(t).startsWith("application/json"));
      assertThat(link.get("short_url").asText()).isEqualTo("https://tly.example/" + code);
      assertThat(link.get("url").asText()).isEqualTo("https://example.com/a/page?x=1&y=2#top");
      // Stamped by PostgreSQL on this same host; a little slack for the two clocks' resolutions.
      assertThat(Instant.parse(link.get("created_at").asText()))
          .isBetween(before.minusSeconds(2), after.plusSeconds(2));
      assertThat(link.get("tags")).as("no tags asked for").isEmpty();
      assertThat(link.size()).as("no other fields: no disabled_at, no expires_at").isEqualTo(5);
    }

    @Test
    void generatesADifferentCodeForEveryLink() {
      Set<String> codes = new HashSet<>();
      for (int i = 0; i < 20; i++) {
        codes.add(web.createLink("https://example.com/same"));
      }

      assertThat(codes).hasSize(20).allMatch(c -> c.matches("[A-Za-z0-9]{8}"));
    }

    @Test
    void createsALinkWithACustomCode() {
      String code = uniqueCode("Launch_2025");

      HttpResponse<String> response =
          createLink("{\"url\":\"https://example.com/launch\",\"code\":\"" + code + "\"}");

      assertThat(response.statusCode()).as(response.body()).isEqualTo(201);
      assertThat(json(response).get("code").asText()).isEqualTo(code);
      assertThat(json(response).get("short_url").asText()).isEqualTo("https://tly.example/" + code);
    }

    @Test
    void refusesACodeThatIsTakenAndKeepsTheFirstLink() {
      String code = uniqueCode("taken");
      assertThat(
              createLink("{\"url\":\"https://first.example/\",\"code\":\"" + code + "\"}")
                  .statusCode())
          .isEqualTo(201);

      HttpResponse<String> second =
          createLink("{\"url\":\"https://second.example/\",\"code\":\"" + code + "\"}");

      assertJsonError(second, 409, "code '" + code + "' is taken");
      assertThat(json(web.get("/api/links/" + code)).get("url").asText())
          .isEqualTo("https://first.example/");
    }

    @ParameterizedTest(name = "\"{0}\"")
    @ValueSource(
        strings = {"ab", "has space", "slash/code", "dot.code", "ümlaut", "percent%20", ""})
    void refusesAnInvalidCustomCode(String code) {
      HttpResponse<String> response =
          createLink("{\"url\":\"https://example.com/\",\"code\":" + JSON.valueToTree(code) + "}");

      assertJsonError(response, 400, "code must match [A-Za-z0-9_-]{3,64}");
    }

    @Test
    void refusesACustomCodeLongerThan64Characters() {
      assertJsonError(
          createLink("{\"url\":\"https://example.com/\",\"code\":\"" + "a".repeat(65) + "\"}"),
          400,
          "code must match");
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"metrics", "health", "api"})
    void refusesACustomCodeThatWouldShadowTheServicesOwnPaths(String code) {
      HttpResponse<String> response =
          createLink("{\"url\":\"https://example.com/\",\"code\":\"" + code + "\"}");

      assertJsonError(response, 400, "code '" + code + "' is reserved");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(
        delimiter = '|',
        textBlock =
            """
            {"url":"javascript:alert(1)"}                   | scheme 'javascript' is not allowed
            {"url":"data:text/html;base64,PGgxPmhpPC9oMT4="} | scheme 'data' is not allowed
            {"url":"/just/a/path"}                          | url must be absolute
            {"url":"https://user:pw@example.com/"}          | url must not contain credentials
            {"url":"https://example.com/a b"}               | whitespace or a control character
            {"url":""}                                      | url is required
            {"code":"nourl1"}                               | url is required
            {"url":null}                                    | url is required
            {"url":42}                                      | url must be a string
            {"url":"https://example.com/","code":7}         | code must be a string
            {"url":"https://TLY.example:443/abc"}           | url points back at this shortener (tly.example)
            {"url":"https://ｔｌｙ.example/abc"}              | url points back at this shortener (tly.example)
            """)
    void refusesABadUrlWithAJsonReason(String body, String reason) {
      assertJsonError(createLink(body), 400, reason);
    }

    @Test
    void refusesAUrlLongerThan2048Characters() {
      String url = "https://example.com/" + "p".repeat(UrlPolicy.MAX_LENGTH);

      assertJsonError(createLink("{\"url\":\"" + url + "\"}"), 400, "longer than 2048 characters");
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(
        strings = {
          "url=https://example.com/",
          "{\"url\":",
          "[\"https://example.com/\"]",
          "\"https://example.com/\"",
          "null"
        })
    void refusesABodyThatIsNotAJsonObject(String body) {
      HttpResponse<String> response = createLink(body);

      assertThat(response.statusCode()).as(response.body()).isEqualTo(400);
      assertThat(json(response).get("error").asText()).startsWith("request body ");
    }

    @Test
    void refusesAnEmptyBody() {
      assertJsonError(createLink(""), 400, "request body must be a JSON object");
    }

    @Test
    void refusesABodyOver8KibWithItsLengthDeclared() {
      String body =
          "{\"url\":\"https://example.com/\",\"pad\":\""
              + "x".repeat(RedirectWebApp.MAX_BODY_BYTES)
              + "\"}";

      assertJsonError(createLink(body), 413, "larger than 8192 bytes");
    }

    @Test
    void refusesABodyOver8KibSentInChunks() {
      String body =
          "{\"url\":\"https://example.com/\",\"pad\":\""
              + "x".repeat(RedirectWebApp.MAX_BODY_BYTES)
              + "\"}";
      // Without a known length the client sends Transfer-Encoding: chunked, so no Content-Length to
      // check.
      HttpRequest.BodyPublisher chunked =
          HttpRequest.BodyPublishers.fromPublisher(HttpRequest.BodyPublishers.ofString(body));

      HttpResponse<String> response =
          web.send(web.request("/api/links", "Authorization", auth(API_KEY)).POST(chunked));

      assertJsonError(response, 413, "larger than 8192 bytes");
    }

    @Test
    void acceptsABodyOfExactly8Kib() {
      String prefix = "{\"url\":\"https://example.com/\",\"pad\":\"";
      String body =
          prefix + "x".repeat(RedirectWebApp.MAX_BODY_BYTES - prefix.length() - 2) + "\"}";
      assertThat(body.getBytes(StandardCharsets.UTF_8)).hasSize(RedirectWebApp.MAX_BODY_BYTES);

      assertThat(createLink(body).statusCode()).isEqualTo(201);
    }

    @Test
    void asksForAnApiKeyWhenThereIsNone() {
      HttpResponse<String> response = web.post("/api/links", "{\"url\":\"https://example.com/\"}");

      assertJsonError(response, 401, "an API key is required");
      assertThat(response.headers().firstValue("WWW-Authenticate")).contains("Bearer");
    }

    @Test
    void asksForABearerKeyWhenAnotherSchemeIsUsed() {
      HttpResponse<String> response =
          web.post(
              "/api/links",
              "{\"url\":\"https://example.com/\"}",
              "Authorization",
              "Basic dXNlcjpwdw==");

      assertJsonError(response, 401, "an API key is required");
    }

    @Test
    void readsTheBearerSchemeInAnyCase() {
      HttpResponse<String> response =
          web.post(
              "/api/links",
              "{\"url\":\"https://example.com/any-case\"}",
              "Authorization",
              "bearer " + API_KEY);

      assertThat(response.statusCode()).as(response.body()).isEqualTo(201);
    }

    @Test
    void refusesAWrongApiKey() {
      HttpResponse<String> response =
          web.post(
              "/api/links",
              "{\"url\":\"https://example.com/\"}",
              "Authorization",
              auth(API_KEY + "x"));

      assertJsonError(response, 403, "the API key is not valid");
    }

    @Test
    void acceptsEveryConfiguredApiKey() {
      HttpResponse<String> response =
          web.post(
              "/api/links",
              "{\"url\":\"https://example.com/\"}",
              "Authorization",
              auth(RunningRedirectWeb.OTHER_API_KEY));

      assertThat(response.statusCode()).isEqualTo(201);
    }

    @Test
    void tellsAKeyItsScope() {
      assertThat(json(web.get("/api/key", "Authorization", auth(API_KEY))).get("scope").asText())
          .isEqualTo("write");
      assertThat(
              json(web.get("/api/key", "Authorization", auth(RunningRedirectWeb.READ_API_KEY)))
                  .get("scope")
                  .asText())
          .isEqualTo("read");
      assertJsonError(web.get("/api/key"), 401, "an API key is required");
      assertJsonError(
          web.get("/api/key", "Authorization", auth(API_KEY + "x")),
          403,
          "the API key is not valid");
    }

    @Test
    void checksTheKeyBeforeReadingTheBody() {
      assertThat(web.post("/api/links", "not json", "Authorization", auth("wrong")).statusCode())
          .isEqualTo(403);
    }

    @Test
    void showsALinkWithoutAnApiKey() {
      String code = web.createLink("https://example.com/shown");

      HttpResponse<String> response = web.get("/api/links/" + code);

      assertThat(response.statusCode()).isEqualTo(200);
      JsonNode link = json(response);
      assertThat(link.get("code").asText()).isEqualTo(code);
      assertThat(link.get("url").asText()).isEqualTo("https://example.com/shown");
      assertThat(link.get("short_url").asText()).isEqualTo("https://tly.example/" + code);
      assertThat(link.has("created_at")).isTrue();
      assertThat(link.has("disabled_at")).isFalse();
    }

    @Test
    void answersNotFoundForAnUnknownLink() {
      assertJsonError(web.get("/api/links/noSuchCode1"), 404, "no link with code 'noSuchCode1'");
    }

    @Test
    void looksLinksUpLikeTheRedirectSoUnknownCodesNeverReachTheDatabase() {
      double lookupsBefore = web.metric("tally_link_database_lookups_total");

      assertJsonError(web.get("/api/links/neverMade42"), 404, "no link with code");
      assertJsonError(web.get("/api/links/neverMade42"), 404, "no link with code");
      assertJsonError(web.get("/api/links/not!a~code"), 404, "no link with code");

      assertThat(web.metric("tally_link_database_lookups_total")).isEqualTo(lookupsBefore);
    }

    @Test
    void disablesALinkSoThatItsRedirectIsGone() {
      String code = web.createLink("https://example.com/soon-gone");
      assertThat(web.get("/" + code).statusCode()).isEqualTo(302);

      HttpResponse<String> deleted =
          web.delete("/api/links/" + code, "Authorization", auth(API_KEY));

      assertThat(deleted.statusCode()).as(deleted.body()).isEqualTo(200);
      assertThat(json(deleted).get("code").asText()).isEqualTo(code);
      Instant disabledAt = Instant.parse(json(deleted).get("disabled_at").asText());
      assertJsonError(web.get("/" + code), 410, "link '" + code + "' was disabled");
      assertThat(web.head("/" + code).statusCode()).isEqualTo(410);
      JsonNode seenByAnyone = json(web.get("/api/links/" + code));
      assertThat(seenByAnyone.get("disabled_at").asText()).isEqualTo(disabledAt.toString());
      assertThat(seenByAnyone.has("url")).as("a taken-down target is not shown").isFalse();
      assertThat(
              json(web.get("/api/links/" + code, "Authorization", auth(API_KEY)))
                  .get("url")
                  .asText())
          .isEqualTo("https://example.com/soon-gone");
    }

    @Test
    void keepsTheFirstDisablingTimeWhenDisabledTwice() {
      String code = web.createLink("https://example.com/twice");
      String first =
          json(web.delete("/api/links/" + code, "Authorization", auth(API_KEY)))
              .get("disabled_at")
              .asText();

      HttpResponse<String> again = web.delete("/api/links/" + code, "Authorization", auth(API_KEY));

      assertThat(again.statusCode()).isEqualTo(200);
      assertThat(json(again).get("disabled_at").asText()).isEqualTo(first);
    }

    @Test
    void needsAnApiKeyToDisableALink() {
      String code = web.createLink("https://example.com/kept");

      assertJsonError(web.delete("/api/links/" + code), 401, "an API key is required");
      assertJsonError(
          web.delete("/api/links/" + code, "Authorization", auth("nope")), 403, "not valid");
      assertThat(web.get("/" + code).statusCode()).isEqualTo(302);
    }

    @Test
    void answersNotFoundWhenDisablingAnUnknownLink() {
      assertJsonError(
          web.delete("/api/links/noSuchCode2", "Authorization", auth(API_KEY)),
          404,
          "no link with code");
    }
  }

  @Nested
  class Redirect {

    @Test
    void redirectsToTheTargetAndForbidsCachingTheRedirect() {
      String code = web.createLink("https://example.com/target?a=1");

      HttpResponse<String> response = web.get("/" + code, "User-Agent", UserAgents.FIREFOX_WINDOWS);

      assertThat(response.statusCode()).isEqualTo(302);
      assertThat(response.headers().firstValue("Location"))
          .contains("https://example.com/target?a=1");
      // A cached redirect would hide every repeat click.
      assertThat(response.headers().firstValue("Cache-Control")).contains("private, no-store");
    }

    @Test
    void redirectsToAnInternationalUrlInItsAsciiForm() {
      // Sent as typed, the Cyrillic path would leave the server as question marks.
      String code = web.createLink("https://ru.wikipedia.org/wiki/Москва");

      HttpResponse<String> response = web.get("/" + code);

      assertThat(response.statusCode()).isEqualTo(302);
      assertThat(response.headers().firstValue("Location"))
          .contains("https://ru.wikipedia.org/wiki/%D0%9C%D0%BE%D1%81%D0%BA%D0%B2%D0%B0");
      assertThat(URI.create(response.headers().firstValue("Location").orElseThrow()).getPath())
          .isEqualTo("/wiki/Москва");
    }

    @Test
    void keepsAnInternationalHostTheDomainItNames() {
      // IDNA2003 would store fass.de: someone else's domain.
      HttpResponse<String> created = createLink("{\"url\":\"https://faß.de/straße\"}");
      assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
      assertThat(json(created).get("url").asText()).isEqualTo("https://xn--fa-hia.de/stra%C3%9Fe");

      HttpResponse<String> response = web.get("/" + json(created).get("code").asText());

      assertThat(response.statusCode()).isEqualTo(302);
      assertThat(response.headers().firstValue("Location"))
          .contains("https://xn--fa-hia.de/stra%C3%9Fe");
    }

    @Test
    void redirectsAHeadRequestToo() {
      String code = web.createLink("https://example.com/head");

      HttpResponse<String> response = web.head("/" + code, "User-Agent", UserAgents.CHROME_WINDOWS);

      assertThat(response.statusCode()).isEqualTo(302);
      assertThat(response.headers().firstValue("Location")).contains("https://example.com/head");
      assertThat(response.headers().firstValue("Cache-Control")).contains("private, no-store");
      assertThat(response.body()).isEmpty();
    }

    @Test
    void answersNotFoundInJsonForAnUnknownCode() {
      assertJsonError(web.get("/nope1234"), 404, "no link with code 'nope1234'");
      assertThat(web.head("/nope1234").statusCode()).isEqualTo(404);
    }

    @Test
    void answersAFloodOfDistinctUnknownCodesWithoutAskingTheDatabase() {
      double lookupsBefore = web.metric("tally_link_database_lookups_total");

      for (int i = 0; i < 500; i++) {
        assertThat(web.get("/flood-" + UUID.randomUUID()).statusCode()).isEqualTo(404);
      }

      // A Bloom filter's false positive may still ask: at most 1 in 100 by its sizing.
      assertThat(web.metric("tally_link_database_lookups_total") - lookupsBefore)
          .isLessThanOrEqualTo(5.0);
      assertThat(web.metric("tally_link_codes_current")).isEqualTo(1.0);
    }

    @Test
    void redirectsALinkCreatedThroughAnotherReplicaAtOnce() throws Exception {
      String code = "other-replica-" + UUID.randomUUID().toString().substring(0, 8);
      assertThat(web.get("/" + code).statusCode()).isEqualTo(404);

      try (java.sql.Connection c =
              java.sql.DriverManager.getConnection(PG.jdbcUrl(), PG.user(), PG.password());
          java.sql.Statement s = c.createStatement()) {
        s.execute(
            "INSERT INTO links (code, url) VALUES ('" + code + "', 'https://example.com/other')");
      }

      Awaitility.await()
          .atMost(Duration.ofSeconds(2))
          .pollInterval(Duration.ofMillis(20))
          .until(() -> web.get("/" + code).statusCode() == 302);
    }

    @Test
    void answersNotFoundForACodeThatCannotExist() {
      assertJsonError(web.get("/ab"), 404, "no link with code 'ab'");
      assertJsonError(
          web.get("/" + "x".repeat(300)), 404, "no link with code '" + "x".repeat(64) + "…'");
    }

    @Test
    void answersNotFoundInJsonForAnUnknownRoute() {
      assertJsonError(web.get("/api/nothing/here"), 404, "no such route");
    }

    @Test
    void redirectsACodeAtOnceAfterItWasCreatedEvenIfItWasAskedForBefore() {
      // The first lookup caches "no such link"; creating the link here must forget that.
      String code = uniqueCode("later");
      assertThat(web.get("/" + code).statusCode()).isEqualTo(404);

      assertThat(
              createLink("{\"url\":\"https://example.com/later\",\"code\":\"" + code + "\"}")
                  .statusCode())
          .isEqualTo(201);

      assertThat(web.get("/" + code).statusCode()).isEqualTo(302);
    }

    @Test
    void firesNoEventForAnUnknownOrDisabledLink() {
      String disabled = web.createLink("https://example.com/off");
      web.delete("/api/links/" + disabled, "Authorization", auth(API_KEY));
      double sentBefore = web.metric("tally_click_events_sent_total");
      double droppedBefore = web.metric("tally_click_events_dropped_total");

      assertThat(web.get("/" + disabled).statusCode()).isEqualTo(410);
      assertThat(web.get("/unknown-code-42").statusCode()).isEqualTo(404);

      assertThat(web.metric("tally_click_events_sent_total")).isEqualTo(sentBefore);
      assertThat(web.metric("tally_click_events_dropped_total")).isEqualTo(droppedBefore);
    }
  }

  @Nested
  class Operations {

    @Test
    void reportsHealthAsJson() {
      HttpResponse<String> response = web.get("/health");

      assertThat(response.statusCode()).isEqualTo(200);
      assertThat(json(response))
          .isEqualTo(
              JSON.createObjectNode()
                  .put("status", "serving")
                  .put("database", "up")
                  .put("kafka", "up"));
    }

    @Test
    void servesHealthAndMetricsOnlyOnTheAdminPortWhenItHasOne() {
      Map<String, String> env = RunningRedirectWeb.environment(PG, KAFKA, topic);
      env.put("TALLY_ADMIN_PORT", "0");
      try (RunningRedirectWeb withAdminPort = RunningRedirectWeb.start(env)) {
        HttpResponse<String> health = withAdminPort.getAdmin("/health");
        assertThat(health.statusCode()).isEqualTo(200);
        assertThat(json(health).get("status").asText()).isEqualTo("serving");
        HttpResponse<String> metrics = withAdminPort.getAdmin("/metrics");
        assertThat(metrics.statusCode()).isEqualTo(200);
        assertThat(metrics.body()).contains("tally_redirects_total");

        assertThat(withAdminPort.get("/health").statusCode()).isEqualTo(404);
        assertThat(withAdminPort.get("/metrics").statusCode()).isEqualTo(404);
        assertThat(withAdminPort.getAdmin("/api/links").statusCode()).isEqualTo(404);
      }
    }

    @Test
    void exposesPrometheusMetrics() {
      String code = web.createLink("https://example.com/metered");
      double redirectsBefore =
          web.series("tally_redirects_total").getOrDefault("status=\"302\"", 0.0);
      web.get("/" + code, "User-Agent", UserAgents.SAFARI_MAC);

      HttpResponse<String> response = web.get("/metrics");

      assertThat(response.statusCode()).isEqualTo(200);
      assertThat(response.headers().firstValue("Content-Type"))
          .hasValueSatisfying(t -> assertThat(t).startsWith("text/plain"));
      assertThat(response.body())
          .contains("tally_redirects_total{status=\"302\"}")
          .contains("tally_redirects_total{status=\"404\"}")
          .contains("tally_redirects_total{status=\"410\"}")
          .contains("tally_click_events_sent_total")
          .contains("tally_click_events_acknowledged_total")
          .contains("tally_redirect_latency_seconds_bucket")
          .contains("tally_kafka_producer_buffer_available_bytes")
          .contains("tally_referrers_dropped_total")
          .contains("cache_gets_total{cache=\"links\",result=\"hit\"}");
      assertThat(web.series("tally_redirects_total").get("status=\"302\""))
          .isEqualTo(redirectsBefore + 1);
      assertThat(web.metric("tally_link_cache_hit_ratio")).isBetween(0.0, 1.0);
    }

    @Test
    void answersASecondRedirectFromMemory() {
      // Counted for this test's lookups only: the totals since start hold every earlier test's
      // hits.
      String code = web.createLink("https://example.com/cached");
      double hitsBefore = linkCacheHits();
      double missesBefore = linkCacheMisses();

      assertThat(web.get("/" + code).statusCode()).isEqualTo(302);
      assertThat(linkCacheMisses() - missesBefore)
          .as("the first redirect reads PostgreSQL")
          .isEqualTo(1.0);
      assertThat(linkCacheHits() - hitsBefore).isZero();

      assertThat(web.get("/" + code).statusCode()).isEqualTo(302);
      assertThat(web.get("/" + code).statusCode()).isEqualTo(302);
      assertThat(linkCacheMisses() - missesBefore).as("later redirects do not").isEqualTo(1.0);
      assertThat(linkCacheHits() - hitsBefore).isEqualTo(2.0);
    }
  }

  @Nested
  class ClickEvents {

    /** Clicks {@code code} once and returns the one event it made, with its record. */
    private ConsumerRecord<String, byte[]> onlyRecord(String code) {
      try (ClickTopicReader reader = new ClickTopicReader(KAFKA.bootstrapServers(), topic)) {
        List<ConsumerRecord<String, byte[]>> records = reader.awaitRecords(code, 1, EVENT_TIMEOUT);
        assertThat(records).hasSize(1);
        return records.get(0);
      }
    }

    private ClickEvent decode(ConsumerRecord<String, byte[]> record) {
      Decoded decoded = ClickEventCodec.decode(record.value(), System.currentTimeMillis());
      assertThat(decoded).isInstanceOf(Decoded.Valid.class);
      return ((Decoded.Valid) decoded).event();
    }

    @Test
    void aBrowserClickBecomesOneEventWithEveryFieldAndNoAddress() throws Exception {
      String code = web.createLink("https://example.com/followed");
      long before = System.currentTimeMillis();
      HttpResponse<String> response =
          web.get(
              "/" + code,
              "User-Agent",
              UserAgents.CHROME_MAC,
              "Referer",
              "https://News.Example.com/story?id=7#c");
      long after = System.currentTimeMillis();
      assertThat(response.statusCode()).isEqualTo(302);

      ConsumerRecord<String, byte[]> record = onlyRecord(code);
      ClickEvent event = decode(record);

      // The wire form: schema version 3 and exactly the contract's fields (no campaign: untagged).
      JsonNode wire = JSON.readTree(record.value());
      assertThat(wire.get("v").asInt()).isEqualTo(ClickEvent.SCHEMA_VERSION).isEqualTo(3);
      assertThat(wire.properties())
          .extracting(Map.Entry::getKey)
          .containsExactlyInAnyOrder(
              "v",
              "click_id",
              "code",
              "ts",
              "visitor",
              "range_visitor",
              "ua",
              "referrer_domain",
              "country",
              "head");

      UUID clickId = event.clickId();
      assertThat(clickId.version()).isEqualTo(7);
      assertThat(clickId.getMostSignificantBits() >>> 16)
          .as("UUIDv7 time")
          .isBetween(before, after);
      assertThat(event.code()).isEqualTo(code);
      assertThat(event.ts()).isBetween(before, after);
      assertThat(event.visitor())
          .isNotEmpty()
          .doesNotContain(LOOPBACK)
          .isEqualTo(web.visitorHash(event.ts(), event.code(), LOOPBACK, UserAgents.CHROME_MAC));
      assertThat(event.rangeVisitor())
          .isEqualTo(web.rangeVisitorKey(event.code(), LOOPBACK, UserAgents.CHROME_MAC));
      assertThat(wire.get("range_visitor").asText()).matches("[0-9a-f]{16}");
      assertThat(event.userAgent()).isEqualTo(UserAgents.CHROME_MAC);
      assertThat(event.referrerDomain()).isEqualTo("news.example.com");
      assertThat(event.country()).isEqualTo(ClickEvent.UNKNOWN_COUNTRY);
      assertThat(event.head()).isFalse();
      assertThat(event.v1()).isNull();

      assertThat(record.key()).as("no key: the partitioner spreads a link's clicks").isNull();
      assertThat(record.timestamp()).isEqualTo(event.ts());
      assertThat(new String(record.value(), StandardCharsets.UTF_8))
          .doesNotContain(LOOPBACK)
          .doesNotContain("story?id=7");
    }

    @Test
    void theShortUrlsQueryGoesOnToTheTargetAndItsCampaignIntoTheEvent() throws Exception {
      String code = web.createLink("https://example.com/sale?id=7&utm_medium=site#buy");

      HttpResponse<String> response =
          web.get("/" + code + "?utm_source=news+letter&utm_medium=email&ref=a%2Fb");

      assertThat(response.statusCode()).isEqualTo(302);
      assertThat(response.headers().firstValue("Location"))
          .hasValue(
              "https://example.com/sale?id=7&utm_source=news+letter&utm_medium=email&ref=a%2Fb#buy");
      ConsumerRecord<String, byte[]> record = onlyRecord(code);
      assertThat(decode(record).campaign())
          .isEqualTo(new ClickEvent.Campaign("news letter", "email", ""));
      assertThat(JSON.readTree(record.value()).get("utm_source").asText()).isEqualTo("news letter");
    }

    @Test
    void aQueryThatWouldMakeTheTargetTooLongIsRefusedAndNotCounted() {
      String code = web.createLink("https://example.com/long");

      HttpResponse<String> response =
          web.get("/" + code + "?q=" + "x".repeat(ShortUrlQuery.MAX_LOCATION));

      assertThat(response.statusCode()).isEqualTo(414);
      assertThat(json(response).get("error").asText()).contains("query string");
    }

    @Test
    void withForwardingOffTheTargetIsUnchangedButTheCampaignStillCounted() {
      Map<String, String> env = RunningRedirectWeb.environment(PG, KAFKA, topic);
      env.put("TALLY_FORWARD_QUERY", "false");
      try (RunningRedirectWeb plain = RunningRedirectWeb.start(env)) {
        String code = plain.createLink("https://example.com/plain");

        HttpResponse<String> response = plain.get("/" + code + "?utm_campaign=winter");

        assertThat(response.headers().firstValue("Location")).hasValue("https://example.com/plain");
        assertThat(decode(onlyRecord(code)).campaign().campaign()).isEqualTo("winter");
      }
    }

    @Test
    void aReferrerHostOfThousandsOfCharactersIsDroppedAndTheClickCounted() {
      String code = web.createLink("https://example.com/probed");
      double droppedBefore = web.metric("tally_referrers_dropped_total");
      // Labels within their bound, a name far beyond 253 characters.
      String host = String.join(".", Collections.nCopies(48, "x".repeat(60)));

      assertThat(web.get("/" + code, "Referer", "https://" + host + "/").statusCode())
          .isEqualTo(302);

      assertThat(decode(onlyRecord(code)).referrerDomain()).isEmpty();
      assertThat(web.metric("tally_referrers_dropped_total")).isEqualTo(droppedBefore + 1);
    }

    @Test
    void aHeadRequestIsMarkedForTheJobToCountAsABot() {
      String code = web.createLink("https://example.com/checked");

      assertThat(web.head("/" + code, "User-Agent", UserAgents.SAFARI_IPHONE).statusCode())
          .isEqualTo(302);

      ClickEvent event = decode(onlyRecord(code));
      assertThat(event.head()).isTrue();
      assertThat(event.userAgent()).isEqualTo(UserAgents.SAFARI_IPHONE);
    }

    @Test
    void aCrawlerClickCarriesItsRawUserAgent() {
      String code = web.createLink("https://example.com/crawled");

      assertThat(web.get("/" + code, "User-Agent", UserAgents.GOOGLEBOT).statusCode())
          .isEqualTo(302);

      ClickEvent event = decode(onlyRecord(code));
      assertThat(event.userAgent()).isEqualTo(UserAgents.GOOGLEBOT);
      assertThat(event.head()).isFalse();
      assertThat(event.referrerDomain()).isEmpty();
    }

    @Test
    void takesTheCountryFromTheConfiguredCdnHeader() {
      String code = web.createLink("https://example.com/abroad");

      web.get("/" + code, "User-Agent", UserAgents.FIREFOX_WINDOWS, COUNTRY_HEADER, "de");

      assertThat(decode(onlyRecord(code)).country()).isEqualTo("DE");
    }

    @Test
    void looksUpTheCountryOfTheClientAddressInTheOfflineDatabase() {
      String code = web.createLink("https://example.com/from-japan");

      web.get(
          "/" + code, "User-Agent", UserAgents.FIREFOX_WINDOWS, "X-Forwarded-For", "203.0.113.9");

      assertThat(decode(onlyRecord(code)).country()).isEqualTo("JP");
    }

    @Test
    void hashesTheForwardedAddressWhenTheConnectionComesFromATrustedProxy() {
      String code = web.createLink("https://example.com/proxied");
      String client = "203.0.113.77";

      // The left-most entry is whatever the client claimed; the proxy appended the address it saw.
      web.get(
          "/" + code,
          "User-Agent",
          UserAgents.CHROME_ANDROID_PIXEL,
          "X-Forwarded-For",
          "6.6.6.6, " + client);

      ConsumerRecord<String, byte[]> record = onlyRecord(code);
      ClickEvent event = decode(record);
      assertThat(event.visitor())
          .isEqualTo(
              web.visitorHash(event.ts(), event.code(), client, UserAgents.CHROME_ANDROID_PIXEL))
          .isNotEqualTo(
              web.visitorHash(event.ts(), event.code(), LOOPBACK, UserAgents.CHROME_ANDROID_PIXEL));
      assertThat(new String(record.value(), StandardCharsets.UTF_8))
          .doesNotContain(client)
          .doesNotContain("6.6.6.6");
    }

    @Test
    void readsEveryForwardedForLineAndTakesTheRightMostUntrustedHop() {
      String code = web.createLink("https://example.com/two-proxies");
      String client = "203.0.113.78";

      // The client sent its own line; the proxy added another instead of extending it.
      web.get(
          "/" + code,
          "User-Agent",
          UserAgents.FIREFOX_LINUX,
          "X-Forwarded-For",
          "6.6.6.6",
          "X-Forwarded-For",
          client);

      ClickEvent event = decode(onlyRecord(code));
      assertThat(event.visitor())
          .isEqualTo(web.visitorHash(event.ts(), event.code(), client, UserAgents.FIREFOX_LINUX));
      assertThat(event.country()).as("the client's address, looked up").isEqualTo("JP");
    }

    @Test
    void ignoresTheForwardedForAndCountryHeadersOfAPeerThatIsNotATrustedProxy() {
      String code = web.createLink("https://example.com/not-via-the-proxy");
      String peer = "0:0:0:0:0:0:0:1";
      // Only 127.0.0.1 is trusted: the same client over IPv6 loopback is a stranger.
      assumeTrue(answersOnIpv6Loopback(), "this machine has no IPv6 loopback");
      HttpRequest.Builder overIpv6 =
          HttpRequest.newBuilder(URI.create("http://[::1]:" + web.port() + "/" + code))
              .timeout(RunningRedirectWeb.REQUEST_TIMEOUT)
              .headers(
                  "User-Agent",
                  UserAgents.CHROME_MAC,
                  "X-Forwarded-For",
                  "203.0.113.9",
                  COUNTRY_HEADER,
                  "de");

      assertThat(web.send(overIpv6).statusCode()).isEqualTo(302);

      ClickEvent event = decode(onlyRecord(code));
      assertThat(event.visitor())
          .isEqualTo(web.visitorHash(event.ts(), event.code(), peer, UserAgents.CHROME_MAC));
      assertThat(event.country()).isEqualTo(ClickEvent.UNKNOWN_COUNTRY);
    }

    @Test
    void everyClickIsItsOwnEvent() {
      String code = web.createLink("https://example.com/popular");

      for (int i = 0; i < 5; i++) {
        assertThat(web.get("/" + code, "User-Agent", UserAgents.FIREFOX_ANDROID).statusCode())
            .isEqualTo(302);
      }

      try (ClickTopicReader reader = new ClickTopicReader(KAFKA.bootstrapServers(), topic)) {
        List<ConsumerRecord<String, byte[]>> records = reader.awaitRecords(code, 5, EVENT_TIMEOUT);
        assertThat(records).hasSize(5);
        assertThat(records.stream().map(r -> decode(r).clickId()).distinct()).hasSize(5);
      }
    }
  }
}
