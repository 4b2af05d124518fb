package io.tally.redirect;

import static io.tally.redirect.RunningRedirectWeb.API_KEY;
import static io.tally.redirect.RunningRedirectWeb.json;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.networknt.schema.InputFormat;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaLocation;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SchemaRegistryConfig;
import com.networknt.schema.dialect.Dialects;
import io.swagger.v3.parser.OpenAPIV3Parser;
import io.swagger.v3.parser.core.models.ParseOptions;
import io.swagger.v3.parser.core.models.SwaggerParseResult;
import io.tally.event.VisitorSketches;
import io.tally.testing.KafkaExtension;
import io.tally.testing.PostgresExtension;
import java.io.IOException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.apache.datasketches.cpc.CpcSketch;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The API's OpenAPI document held to the running app: it parses without a message, it names exactly
 * the routes the app serves, and every answer of every route, success and error, has a documented
 * status, the documented headers and a body its documented schema accepts.
 */
class OpenApiDocumentITCase {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();
  @RegisterExtension static final KafkaExtension KAFKA = new KafkaExtension();

  /** Served routes left out of the document, by prefix, with the reason. */
  private static final Map<String, String> UNDOCUMENTED_ROUTES =
      Map.of(
          "GET /dashboard/vendor/",
          "the dashboard's chart library: a file of the page /dashboard",
          "GET /api/docs/",
          "Swagger UI's files: loaded by the page /api/docs",
          "BEFORE ",
          "the security headers of every answer and the API's limit per client address: filters,"
              + " not routes");

  /**
   * Why no documented 503 is answered here: each needs PostgreSQL down or every stats connection
   * taken, which DatabaseOutageITCase and StatsOverloadITCase bring about.
   */
  private static final String UNAVAILABLE = "503";

  private static final Set<String> OPERATIONS =
      Set.of("get", "put", "post", "delete", "options", "head", "patch", "trace");
  private static final String WRONG_KEY = "not-a-key-of-this-server";
  private static final ObjectMapper JSON = new ObjectMapper();

  private static RunningRedirectWeb web;

  /** A second server on the same database whose every limit is 1, for the 429s. */
  private static RunningRedirectWeb limited;

  private static RunningRedirectWeb target;
  private static String documentText;
  private static JsonNode document;
  private static SchemaRegistry schemas;

  private final List<String> problems = new ArrayList<>();
  private final Set<String> answered = new TreeSet<>();
  private final Map<String, Schema> schemaByName = new HashMap<>();

  @BeforeAll
  static void start() throws IOException {
    PG.truncateAll();
    web =
        RunningRedirectWeb.start(
            RunningRedirectWeb.environment(PG, KAFKA, KAFKA.newTopic("clicks-openapi", 1)));
    Map<String, String> tight =
        RunningRedirectWeb.environment(PG, KAFKA, KAFKA.newTopic("clicks-openapi-limited", 1));
    for (RateLimits.Limit limit : RateLimits.Limit.values()) {
      tight.put(RedirectWebConfig.rateLimitVariable(limit), "1");
    }
    limited = RunningRedirectWeb.start(tight);
    target = web;
    HttpResponse<String> served = web.get("/api/openapi.json");
    assertThat(served.statusCode()).isEqualTo(200);
    documentText = served.body();
    document = JSON.readTree(documentText);
    String location = web.uri("/api/openapi.json").toString();
    // The whole document is the schema resource, so that a "$ref" inside a schema resolves against
    // components/schemas as it does for any OpenAPI tool; format is asserted, so a date-time or a
    // URI that is not one fails.
    schemas =
        SchemaRegistry.withDialect(
            Dialects.getDraft202012(),
            registry ->
                registry
                    .schemas(Map.of(location, documentText))
                    .schemaRegistryConfig(
                        SchemaRegistryConfig.builder().formatAssertionsEnabled(true).build()));
  }

  @AfterAll
  static void stop() {
    if (web != null) {
      web.close();
    }
    if (limited != null) {
      limited.close();
    }
  }

  @Test
  void theServedDocumentParsesWithoutAMessage() {
    ParseOptions options = new ParseOptions();
    options.setResolve(true);
    SwaggerParseResult result = new OpenAPIV3Parser().readContents(documentText, null, options);

    assertThat(result.getMessages()).isEmpty();
    assertThat(result.getOpenAPI().getOpenapi()).isEqualTo("3.1.0");
    assertThat(result.getOpenAPI().getPaths()).isNotEmpty();
  }

  @Test
  void everyServedRouteIsDocumentedAndEveryDocumentedRouteIsServed() {
    Set<String> served = new TreeSet<>();
    Set<String> leftOut = new TreeSet<>();
    web.app()
        .unsafe
        .internalRouter
        .allHttpHandlers()
        .forEach(
            handler -> {
              String route = handler.endpoint.method.name() + " " + handler.endpoint.path;
              String prefix =
                  UNDOCUMENTED_ROUTES.keySet().stream()
                      .filter(route::startsWith)
                      .findFirst()
                      .orElse(null);
              if (prefix == null) {
                served.add(route);
              } else {
                leftOut.add(prefix);
              }
            });
    Set<String> documented = new TreeSet<>();
    for (Map.Entry<String, JsonNode> path : document.path("paths").properties()) {
      for (Map.Entry<String, JsonNode> operation : path.getValue().properties()) {
        if (OPERATIONS.contains(operation.getKey())) {
          documented.add(operation.getKey().toUpperCase(Locale.ROOT) + " " + path.getKey());
        }
      }
    }

    assertThat(documented)
        .as("documented routes, against those served but for %s", UNDOCUMENTED_ROUTES)
        .containsExactlyInAnyOrderElementsOf(served);
    assertThat(leftOut)
        .as("every route left out of the document still exists")
        .containsExactlyInAnyOrderElementsOf(UNDOCUMENTED_ROUTES.keySet());
  }

  @Test
  void everyAnswerOfEveryRouteIsDocumentedAndMatchesItsSchema() throws Exception {
    String key = "Bearer " + API_KEY;
    String wrong = "Bearer " + WRONG_KEY;

    // Links.
    expect(
        201, "POST", "/api/links", "/api/links", body("https://example.com/doc", "doc-main"), key);
    expect(201, "POST", "/api/links", "/api/links", body("https://example.org/gen", null), key);
    expect(
        201, "POST", "/api/links", "/api/links", body("https://example.net/gone", "doc-gone"), key);
    expect(409, "POST", "/api/links", "/api/links", body("https://example.com/x", "doc-main"), key);
    // The docs and the document live under /api, which stays reserved.
    expect(400, "POST", "/api/links", "/api/links", body("https://example.com/x", "api"), key);
    expect(400, "POST", "/api/links", "/api/links", body("javascript:alert(1)", null), key);
    expect(400, "POST", "/api/links", "/api/links", "[1, 2]", key);
    expect(401, "POST", "/api/links", "/api/links", body("https://example.com/x", null), null);
    expect(403, "POST", "/api/links", "/api/links", body("https://example.com/x", null), wrong);
    expect(
        413,
        "POST",
        "/api/links",
        "/api/links",
        body("https://example.com/" + "a".repeat(RedirectWebApp.MAX_BODY_BYTES), null),
        key);

    expect(200, "GET", "/api/links/{code}", "/api/links/doc-main", null, null);
    expect(404, "GET", "/api/links/{code}", "/api/links/no-such-link", null, null);
    expect(200, "DELETE", "/api/links/{code}", "/api/links/doc-gone", null, key);
    expect(200, "GET", "/api/links/{code}", "/api/links/doc-gone", null, null);
    expect(404, "DELETE", "/api/links/{code}", "/api/links/no-such-link", null, key);
    expect(401, "DELETE", "/api/links/{code}", "/api/links/doc-main", null, null);
    expect(403, "DELETE", "/api/links/{code}", "/api/links/doc-main", null, wrong);
    String change = "/api/links/{code}";
    expect(
        200,
        "PATCH",
        change,
        "/api/links/doc-main",
        "{\"tags\": [\"docs\"], \"expires_at\": \"2099-01-01T00:00:00Z\"}",
        key);
    expect(200, "GET", "/api/links/{code}", "/api/links/doc-main", null, key);
    expect(400, "PATCH", change, "/api/links/doc-main", "{\"code\": \"other\"}", key);
    expect(404, "PATCH", change, "/api/links/no-such-link", "{\"tags\": []}", key);
    expect(401, "PATCH", change, "/api/links/doc-main", "{\"tags\": []}", null);
    expect(403, "PATCH", change, "/api/links/doc-main", "{\"tags\": []}", wrong);
    expect(
        413,
        "PATCH",
        change,
        "/api/links/doc-main",
        "{\"url\": \"https://example.com/" + "a".repeat(RedirectWebApp.MAX_BODY_BYTES) + "\"}",
        key);

    JsonNode first = json(expect(200, "GET", "/api/links", "/api/links?limit=2", null, key));
    String cursor = first.path("next_cursor").asText();
    expect(200, "GET", "/api/links", "/api/links?limit=2&cursor=" + cursor, null, key);
    expect(200, "GET", "/api/links", "/api/links?q=example.ORG", null, key);
    expect(200, "GET", "/api/links", "/api/links?tag=docs", null, key);
    expect(400, "GET", "/api/links", "/api/links?tag=-not-a-tag", null, key);
    expect(400, "GET", "/api/links", "/api/links?limit=201", null, key);
    expect(400, "GET", "/api/links", "/api/links?cursor=not-a-cursor", null, key);
    expect(401, "GET", "/api/links", "/api/links", null, null);
    expect(403, "GET", "/api/links", "/api/links", null, wrong);

    // Redirects.
    for (String method : List.of("GET", "HEAD")) {
      expect(302, method, "/{code}", "/doc-main", null, null);
      expect(404, method, "/{code}", "/no-such-link", null, null);
      expect(404, method, "/{code}", "/no", null, null);
      expect(410, method, "/{code}", "/doc-gone", null, null);
    }
    expect(302, "GET", "/{code}", "/doc-main?utm_source=docs&x=1", null, null);
    expect(
        414, "GET", "/{code}", "/doc-main?q=" + "x".repeat(ShortUrlQuery.MAX_LOCATION), null, null);

    // Stats, over known buckets.
    seedStats();
    String series = "/api/links/doc-main/stats?from=2026-11-01T10:00:00Z&to=2026-11-01T12:00:00Z";
    String stats = "/api/links/{code}/stats";
    expect(200, "GET", stats, series + "&interval=minute", null, key);
    expect(200, "GET", stats, series + "&interval=hour", null, key);
    // One hour (exact visitors), whole days with sketches (an estimate and no note), and days one
    // of which has no sketch (a note).
    expect(
        200,
        "GET",
        stats,
        "/api/links/doc-main/stats?from=2026-11-01T10:00:00Z&to=2026-11-01T11:00:00Z&interval=hour",
        null,
        key);
    expect(
        200,
        "GET",
        stats,
        "/api/links/doc-main/stats?from=2026-11-02T00:00:00Z&to=2026-11-04T00:00:00Z&interval=day",
        null,
        key);
    expect(
        200,
        "GET",
        stats,
        "/api/links/doc-main/stats?from=2026-10-31T00:00:00Z&to=2026-11-03T00:00:00Z&interval=day",
        null,
        key);
    expect(200, "GET", stats, series + "&interval=hour&format=csv", null, key);
    expect(200, "GET", stats, series + "&interval=minute&format=csv", null, key);
    expect(200, "GET", stats, "/api/links/doc-gone/stats?from=7d", null, key);
    expect(400, "GET", stats, series + "&interval=week", null, key);
    expect(400, "GET", stats, "/api/links/doc-main/stats?from=yesterday", null, key);
    expect(400, "GET", stats, series + "&format=xml", null, key);
    expect(
        200,
        "GET",
        stats,
        "/api/links/doc-main/stats?from=2026-11-02T00:00:00Z&to=2026-11-04T00:00:00Z&interval=day"
            + "&compare=previous",
        null,
        key);
    expect(400, "GET", stats, series + "&compare=last-year", null, key);
    expect(400, "GET", stats, series + "&format=csv&compare=previous", null, key);
    expect(404, "GET", stats, "/api/links/no-such-link/stats", null, key);
    expect(401, "GET", stats, series, null, null);
    expect(403, "GET", stats, series, null, wrong);

    String audit = "/api/links/{code}/audit";
    String ledger = "/api/links/doc-main/audit?from=2026-11-01T10:00:00Z&to=2026-11-01T12:00:00Z";
    expect(200, "GET", audit, ledger, null, key);
    expect(200, "GET", audit, "/api/links/doc-gone/audit?from=7d", null, key);
    expect(400, "GET", audit, "/api/links/doc-main/audit?from=2020-01-01T00:00:00Z", null, key);
    expect(404, "GET", audit, "/api/links/no-such-link/audit", null, key);
    expect(401, "GET", audit, ledger, null, null);
    expect(403, "GET", audit, ledger, null, wrong);

    String breakdown = "/api/links/{code}/breakdown";
    String day = "&from=2026-11-01T00:00:00Z&to=2026-11-02T00:00:00Z";
    String countries = "/api/links/doc-main/breakdown?dimension=country" + day;
    expect(200, "GET", breakdown, countries, null, key);
    expect(200, "GET", breakdown, countries + "&format=csv", null, key);
    expect(
        200,
        "GET",
        breakdown,
        "/api/links/doc-main/breakdown?dimension=referrer&format=csv" + day,
        null,
        key);
    expect(
        200, "GET", breakdown, "/api/links/doc-main/breakdown?dimension=bot_kind" + day, null, key);
    expect(400, "GET", breakdown, "/api/links/doc-main/breakdown?from=24h", null, key);
    expect(400, "GET", breakdown, countries + "&limit=1001", null, key);
    expect(
        200,
        "GET",
        breakdown,
        "/api/links/doc-main/breakdown?dimension=country&from=2026-11-02T00:00:00Z"
            + "&to=2026-11-03T00:00:00Z&compare=previous",
        null,
        key);
    expect(404, "GET", breakdown, "/api/links/no-such-link/breakdown?dimension=os", null, key);
    expect(401, "GET", breakdown, countries, null, null);
    expect(403, "GET", breakdown, countries, null, wrong);

    String top = "/api/top?from=2026-11-01T09:00:00Z&to=2026-11-01T12:00:00Z";
    expect(200, "GET", "/api/top", top, null, key);
    expect(
        200,
        "GET",
        "/api/top",
        "/api/top?from=2026-10-01T00:00:00Z&to=2026-11-30T00:00:00Z",
        null,
        key);
    expect(400, "GET", "/api/top", "/api/top?from=9999d", null, key);
    expect(401, "GET", "/api/top", top, null, null);
    expect(403, "GET", "/api/top", top, null, wrong);
    String tags = "/api/tags?from=2026-11-01T00:00:00Z&to=2026-11-03T00:00:00Z";
    expect(200, "GET", "/api/tags", tags, null, key);
    expect(400, "GET", "/api/tags", "/api/tags?from=9999d", null, key);
    expect(401, "GET", "/api/tags", tags, null, null);
    expect(403, "GET", "/api/tags", tags, null, wrong);

    expect(200, "GET", "/api/key", "/api/key", null, key);
    expect(401, "GET", "/api/key", "/api/key", null, null);
    expect(403, "GET", "/api/key", "/api/key", null, wrong);

    // Operations and pages.
    expect(200, "GET", "/health", "/health", null, null);
    expect(200, "GET", "/metrics", "/metrics", null, null);
    expect(302, "GET", "/dashboard", "/dashboard", null, null);
    expect(200, "GET", "/dashboard", "/dashboard/", null, null);
    expect(200, "GET", "/api/openapi.json", "/api/openapi.json", null, null);
    expect(200, "GET", "/api/docs", "/api/docs", null, null);

    // Over a limit: the server whose limits are 1 answers the second request of each kind 429.
    target = limited;
    try {
      expect(404, "GET", "/{code}", "/no-such-link", null, null);
      expect(429, "GET", "/{code}", "/no-such-link-2", null, null);
      expect(429, "HEAD", "/{code}", "/no-such-link-3", null, null);
      expect(200, "GET", "/api/links/{code}", "/api/links/doc-main", null, null);
      expect(429, "GET", "/api/links/{code}", "/api/links/doc-main", null, null);
      expect(429, "POST", "/api/links", "/api/links", body("https://example.com/y", null), key);
      expect(429, "GET", "/api/links", "/api/links", null, key);
      expect(429, "DELETE", "/api/links/{code}", "/api/links/doc-main", null, key);
      expect(429, "PATCH", "/api/links/{code}", "/api/links/doc-main", "{\"tags\": []}", key);
      expect(429, "GET", stats, series, null, key);
      expect(429, "GET", breakdown, countries, null, key);
      expect(429, "GET", audit, ledger, null, key);
      expect(429, "GET", "/api/top", top, null, key);
      expect(429, "GET", "/api/tags", tags, null, key);
      expect(429, "GET", "/api/key", "/api/key", null, key);
    } finally {
      target = web;
    }

    assertThat(problems).as("answers that differ from the document").isEmpty();
    assertThat(documentedAnswers())
        .as("documented answers no request here brought about")
        .filteredOn(answer -> !answer.endsWith(" " + UNAVAILABLE))
        .isSubsetOf(answered);
  }

  @Test
  void swaggerUiIsServedFromTheAppsOwnJarAndFetchesNothingFromElsewhere() {
    HttpResponse<String> page = web.get("/api/docs");
    assertThat(page.statusCode()).isEqualTo(200);
    assertThat(page.body())
        .contains("/api/docs/swagger-ui-bundle.js")
        .contains("/api/docs/swagger-ui.css")
        .doesNotContain("http://")
        .doesNotContain("https://");
    HttpResponse<String> start = web.get("/api/docs/docs.js");
    assertThat(start.body())
        .contains("url: '/api/openapi.json'")
        .contains("validatorUrl: null")
        .doesNotContain("http://")
        .doesNotContain("https://");
    HttpResponse<String> bundle = web.get("/api/docs/swagger-ui-bundle.js");
    assertThat(bundle.statusCode()).isEqualTo(200);
    assertThat(bundle.headers().firstValue("Content-Type").orElseThrow())
        .startsWith("text/javascript");
    assertThat(bundle.body()).contains("SwaggerUIBundle");
    HttpResponse<String> css = web.get("/api/docs/swagger-ui.css");
    assertThat(css.statusCode()).isEqualTo(200);
    assertThat(css.headers().firstValue("Content-Type").orElseThrow()).startsWith("text/css");
    assertThat(web.get("/api/docs/").body()).isEqualTo(page.body());
  }

  // ---- checking one answer -------------------------------------------------------------------

  /**
   * Sends a request, asserts its status is the one the step means to bring about, and notes every
   * way its answer differs from what the document says of {@code route}.
   */
  private HttpResponse<String> expect(
      int status, String method, String route, String path, String body, String authorization) {
    HttpRequest.Builder request = target.request(path);
    if (authorization != null) {
      request.header("Authorization", authorization);
    }
    if (body != null) {
      request.header("Content-Type", "application/json");
    }
    request.method(
        method,
        body == null
            ? HttpRequest.BodyPublishers.noBody()
            : HttpRequest.BodyPublishers.ofString(body));
    HttpResponse<String> response = target.send(request);
    String call = method + " " + path + " → " + response.statusCode();
    if (response.statusCode() != status) {
      problems.add(call + ", meant to be " + status + ": " + response.body());
    }
    check(method, route, response, call);
    return response;
  }

  private void check(String method, String route, HttpResponse<String> response, String call) {
    JsonNode operation = document.path("paths").path(route).path(method.toLowerCase(Locale.ROOT));
    if (operation.isMissingNode()) {
      problems.add(call + ": " + method + " " + route + " is not in the document");
      return;
    }
    String status = String.valueOf(response.statusCode());
    JsonNode described = resolve(operation.path("responses").path(status));
    if (described.isMissingNode()) {
      problems.add(call + ": status not documented for " + method + " " + route);
      return;
    }
    answered.add(method + " " + route + " " + status);
    for (Map.Entry<String, JsonNode> header : described.path("headers").properties()) {
      JsonNode spec = resolve(header.getValue());
      String value = response.headers().firstValue(header.getKey()).orElse(null);
      if (value == null && spec.path("required").asBoolean(false)) {
        problems.add(call + ": no " + header.getKey() + " header");
      }
      JsonNode constant = spec.path("schema").path("const");
      if (value != null && !constant.isMissingNode() && !constant.asText().equals(value)) {
        problems.add(call + ": " + header.getKey() + " is '" + value + "', not " + constant);
      }
    }
    JsonNode content = described.path("content");
    if (content.isMissingNode() || content.isEmpty()) {
      if (!response.body().isEmpty()) {
        problems.add(call + ": a body where none is documented: " + response.body());
      }
      return;
    }
    String mediaType =
        response.headers().firstValue("Content-Type").orElse("").split(";")[0].trim();
    JsonNode media = content.path(mediaType);
    if (media.isMissingNode()) {
      problems.add(call + ": Content-Type " + mediaType + " is not documented");
      return;
    }
    String instance;
    if (mediaType.equals("application/json") || mediaType.equals("application/problem+json")) {
      instance = response.body();
      JsonNode errorStatus = json(response).path("status");
      if (response.statusCode() >= 400 && errorStatus.asInt() != response.statusCode()) {
        problems.add(call + ": the body's status is " + errorStatus);
      }
    } else {
      // A text body is checked as a JSON string against its schema (a CSV's pattern, say).
      instance = JSON.getNodeFactory().textNode(response.body()).toString();
    }
    String ref = media.path("schema").path("$ref").asText();
    String prefix = "#/components/schemas/";
    if (!ref.startsWith(prefix)) {
      problems.add(call + ": the body's schema is not one of components/schemas");
      return;
    }
    schema(ref.substring(prefix.length()))
        .validate(instance, InputFormat.JSON)
        .forEach(error -> problems.add(call + ": " + error + " in " + abbreviate(instance)));
  }

  /** The object a {@code $ref} within the document points at, or the node itself. */
  private static JsonNode resolve(JsonNode node) {
    JsonNode ref = node.path("$ref");
    return ref.isTextual() ? document.at(ref.asText().substring(1)) : node;
  }

  private Schema schema(String name) {
    return schemaByName.computeIfAbsent(
        name,
        n ->
            schemas.getSchema(
                SchemaLocation.of(web.uri("/api/openapi.json") + "#/components/schemas/" + n)));
  }

  /** Every documented answer as "METHOD route status". */
  private static Set<String> documentedAnswers() {
    Set<String> answers = new TreeSet<>();
    for (Map.Entry<String, JsonNode> path : document.path("paths").properties()) {
      for (Map.Entry<String, JsonNode> operation : path.getValue().properties()) {
        if (OPERATIONS.contains(operation.getKey())) {
          for (Map.Entry<String, JsonNode> status :
              operation.getValue().path("responses").properties()) {
            answers.add(
                operation.getKey().toUpperCase(Locale.ROOT)
                    + " "
                    + path.getKey()
                    + " "
                    + status.getKey());
          }
        }
      }
    }
    return answers;
  }

  // ---- fixtures ------------------------------------------------------------------------------

  private static String body(String url, String code) {
    var node = JSON.createObjectNode().put("url", url);
    if (code != null) {
      node.put("code", code);
    }
    return node.toString();
  }

  /** Buckets of every kind for doc-main and doc-gone, so no answer is only empty arrays. */
  private static void seedStats() throws Exception {
    try (Connection c = PG.connect();
        Statement s = c.createStatement()) {
      s.execute(
          "INSERT INTO click_counts (code, minute, clicks, bot_clicks) VALUES ('doc-main',"
              + " '2026-11-01T10:00:00Z', 3, 1), ('doc-main', '2026-11-01T10:01:00Z', 2, 0)");
      s.execute(
          "INSERT INTO click_hourly (code, hour, clicks, bot_clicks, visitors) VALUES ('doc-main',"
              + " '2026-11-01T10:00:00Z', 5, 1, 4), ('doc-main', '2026-11-01T11:00:00Z', 1, 0, 1),"
              + " ('doc-gone', '2026-11-01T10:00:00Z', 2, 0, 1)");
      s.execute(
          "INSERT INTO click_daily (code, day, clicks, bot_clicks, visitors) VALUES ('doc-main',"
              + " '2026-11-01', 6, 1, 4), ('doc-gone', '2026-11-01', 2, 0, 1)");
      s.execute(
          "INSERT INTO link_ledger_hourly (code, hour, duplicates, late, refused_rows) VALUES"
              + " ('doc-main', '2026-11-01T10:00:00Z', 2, 1, 0)");
      s.execute(
          "INSERT INTO click_send_drops (instance, minute, dropped) VALUES ('web-a',"
              + " '2026-11-01T10:30:00Z', 3)");
      s.execute(
          "INSERT INTO reconcile_runs (id, range_from, range_to, closed_before, mode, status,"
              + " finished_at) VALUES (801, '2026-11-01', '2026-11-02', '2026-11-01T12:00:00Z',"
              + " 'repair', 'finished', '2026-11-02T03:00:00Z'), (802, '2026-11-01',"
              + " '2026-11-02', '2026-11-01T12:00:00Z', 'repair', 'running', NULL)");
      s.execute(
          "INSERT INTO reconcile_drift (run_id, code, minute, kind, stored_clicks,"
              + " stored_bot_clicks, recounted_clicks, recounted_bot_clicks, repaired) VALUES"
              + " (801, 'doc-main', '2026-11-01T10:01:00Z', 'under', 1, 0, 2, 0, TRUE),"
              + " (802, 'doc-main', '2026-11-01T10:02:00Z', 'missing', NULL, NULL, 1, 0, FALSE)");
      try (PreparedStatement day =
          c.prepareStatement(
              "INSERT INTO click_daily (code, day, clicks, bot_clicks, visitors, visitor_sketch)"
                  + " VALUES ('doc-main', ?, 3, 0, 3, ?)")) {
        CpcSketch visitors = VisitorSketches.newSketch();
        visitors.update(1L);
        visitors.update(2L);
        visitors.update(3L);
        for (String date : List.of("2026-11-02", "2026-11-03")) {
          day.setDate(1, java.sql.Date.valueOf(date));
          day.setBytes(2, VisitorSketches.toBytes(visitors));
          day.executeUpdate();
        }
      }
      s.execute(
          "INSERT INTO click_dimensions_daily (code, day, dimension, value, clicks) VALUES"
              + " ('doc-main', '2026-11-01', 'country', 'DE', 5), ('doc-main', '2026-11-01',"
              + " 'country', 'US', 1), ('doc-main', '2026-11-01', 'referrer', '', 3), ('doc-main',"
              + " '2026-11-01', 'referrer', 'news, \"daily\"', 2), ('doc-main', '2026-11-01',"
              + " 'bot_kind', 'crawler', 1)");
      s.execute(
          "INSERT INTO stream_progress (job, closed_before) VALUES ('tally-click-count',"
              + " '2026-11-01T12:00:00Z')");
    }
  }

  private static String abbreviate(String text) {
    return text.length() <= 300 ? text : text.substring(0, 300) + "…";
  }
}
