package io.tally.redirect;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.javalin.Javalin;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.tally.testing.KafkaExtension;
import io.tally.testing.PostgresExtension;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.LocalDate;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A redirect-web started for real through {@link RedirectWebServer#start} on a free port, with an
 * HTTP client that talks to it over loopback and reads its metrics. Started once per test class.
 */
final class RunningRedirectWeb implements AutoCloseable {

  static final String API_KEY = "test-key-0123456789-abcdefghijklmnop";
  static final String OTHER_API_KEY = "second-key-abcdefgh-0123456789ijklm";
  static final String READ_API_KEY = "read-only-key-0123456789-abcdefghijk";
  static final String IP_HASH_SECRET = "test-ip-hash-secret-of-some-length";
  static final String PUBLIC_URL = "https://tly.example/";
  static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(10);

  private static final ObjectMapper JSON = new ObjectMapper();

  private final RedirectWebServer server;
  private final Map<String, String> env;
  private final HttpClient client;

  private RunningRedirectWeb(RedirectWebServer server, Map<String, String> env) {
    this.server = server;
    this.env = Map.copyOf(env);
    // HTTP/1.1 and no redirect following: the tests look at the 302 itself.
    this.client =
        HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .followRedirects(HttpClient.Redirect.NEVER)
            .connectTimeout(REQUEST_TIMEOUT)
            .build();
  }

  /**
   * The environment of a test server on the extensions' PostgreSQL and Kafka; tests add or change
   * keys.
   */
  static Map<String, String> environment(PostgresExtension pg, KafkaExtension kafka, String topic) {
    // As in production: a login with redirect-web's least-privilege role, the schema migrated by
    // its
    // owner beforehand.
    Map<String, String> env =
        environment(
            pg.jdbcUrl(),
            pg.loginWith("tally_redirect_web"),
            PostgresExtension.LOGIN_PASSWORD,
            kafka,
            topic);
    env.put("TALLY_PG_MIGRATE", "false");
    return env;
  }

  /**
   * The environment of a test server on a PostgreSQL of the test's own and the extension's Kafka.
   */
  static Map<String, String> environment(
      String jdbcUrl, String user, String password, KafkaExtension kafka, String topic) {
    Map<String, String> env = new HashMap<>();
    env.put("TALLY_HTTP_PORT", "0");
    env.put("TALLY_PUBLIC_URL", PUBLIC_URL);
    env.put("TALLY_PG_URL", jdbcUrl);
    env.put("TALLY_PG_USER", user);
    env.put("TALLY_PG_PASSWORD", password);
    env.put("TALLY_KAFKA_BOOTSTRAP", kafka.bootstrapServers());
    env.put("TALLY_CLICK_TOPIC", topic);
    env.put("TALLY_API_KEYS", API_KEY + "," + OTHER_API_KEY + ",read:" + READ_API_KEY);
    env.put("TALLY_IP_HASH_SECRET", IP_HASH_SECRET);
    // Off, so that a test of something else is never refused for its own pace; RateLimitsITCase
    // turns them on.
    for (RateLimits.Limit limit : RateLimits.Limit.values()) {
      env.put(RedirectWebConfig.rateLimitVariable(limit), "0");
    }
    return env;
  }

  static RunningRedirectWeb start(Map<String, String> env) {
    return new RunningRedirectWeb(RedirectWebServer.start(RedirectWebConfig.fromEnv(env)), env);
  }

  /** A server whose clicks go to the sink {@code clickSinks} opens instead of Kafka. */
  static RunningRedirectWeb start(Map<String, String> env, ClickSink.Factory clickSinks) {
    return new RunningRedirectWeb(
        RedirectWebServer.start(RedirectWebConfig.fromEnv(env), clickSinks), env);
  }

  /**
   * Clicks {@code code} until Kafka has acknowledged a click event. The server fetches the topic's
   * metadata in the background after it starts, and a click before that is dropped by design (the
   * redirect never waits for Kafka); tests that count events start after this.
   */
  void awaitProducerReady(String code) {
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (metric("tally_click_events_acknowledged_total") < 1) {
      assertThat(System.nanoTime()).as("producer ready within 60 s").isLessThan(deadline);
      assertThat(get("/" + code, "User-Agent", UserAgents.FIREFOX_LINUX).statusCode())
          .isEqualTo(302);
      sleep(Duration.ofMillis(50));
    }
  }

  /**
   * The visitor hash this server makes for a client of link {@code code} at {@code ts}, under the
   * day's salt as stored in PostgreSQL.
   */
  String visitorHash(long ts, String code, String address, String userAgent) {
    return new VisitorHasher(IP_HASH_SECRET, this::storedSalt, new SimpleMeterRegistry())
        .hash(ts, code, address, userAgent);
  }

  /** The key across days this server makes for a client of link {@code code}. */
  long rangeVisitorKey(String code, String address, String userAgent) {
    return new VisitorHasher(IP_HASH_SECRET, this::storedSalt, new SimpleMeterRegistry())
        .rangeKey(code, address, userAgent);
  }

  /** The salt PostgreSQL holds for a day, or null. */
  byte[] storedSalt(LocalDate day) {
    try (Connection c =
            DriverManager.getConnection(
                env.get("TALLY_PG_URL"), env.get("TALLY_PG_USER"), env.get("TALLY_PG_PASSWORD"));
        PreparedStatement ps = c.prepareStatement("SELECT salt FROM visitor_salts WHERE day = ?")) {
      ps.setDate(1, java.sql.Date.valueOf(day));
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getBytes(1) : null;
      }
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  int port() {
    return server.port();
  }

  /** The app as it runs, to read its routes. */
  Javalin app() {
    return server.app();
  }

  /** A GET on the port of {@code /health} and {@code /metrics} ({@code TALLY_ADMIN_PORT}). */
  HttpResponse<String> getAdmin(String path) {
    return send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.adminPort() + path))
            .timeout(REQUEST_TIMEOUT)
            .GET());
  }

  URI uri(String path) {
    return URI.create("http://127.0.0.1:" + port() + path);
  }

  HttpRequest.Builder request(String path, String... headers) {
    HttpRequest.Builder builder = HttpRequest.newBuilder(uri(path)).timeout(REQUEST_TIMEOUT);
    if (headers.length > 0) {
      builder.headers(headers);
    }
    return builder;
  }

  HttpResponse<String> get(String path, String... headers) {
    return send(request(path, headers).GET());
  }

  HttpResponse<String> head(String path, String... headers) {
    return send(request(path, headers).method("HEAD", HttpRequest.BodyPublishers.noBody()));
  }

  HttpResponse<String> post(String path, String body, String... headers) {
    return send(request(path, headers).POST(HttpRequest.BodyPublishers.ofString(body)));
  }

  HttpResponse<String> patch(String path, String body, String... headers) {
    return send(request(path, headers).method("PATCH", HttpRequest.BodyPublishers.ofString(body)));
  }

  HttpResponse<String> delete(String path, String... headers) {
    return send(request(path, headers).DELETE());
  }

  HttpResponse<String> send(HttpRequest.Builder request) {
    try {
      return client.send(request.build(), HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** Creates a link through the API and returns its code. */
  String createLink(String url) {
    HttpResponse<String> response =
        post(
            "/api/links",
            "{\"url\":" + JSON.valueToTree(url) + "}",
            "Authorization",
            "Bearer " + API_KEY,
            "Content-Type",
            "application/json");
    assertThat(response.statusCode()).as(response.body()).isEqualTo(201);
    return json(response).get("code").asText();
  }

  static JsonNode json(HttpResponse<String> response) {
    try {
      return JSON.readTree(response.body());
    } catch (IOException e) {
      throw new AssertionError("not JSON: " + response.body(), e);
    }
  }

  /** Every series of a Prometheus metric by its label text (empty for a series without labels). */
  Map<String, Double> series(String name) {
    Map<String, Double> series = new LinkedHashMap<>();
    for (String line : get("/metrics").body().split("\n")) {
      if (line.startsWith(name + "{")) {
        int close = line.lastIndexOf('}');
        series.put(
            line.substring(name.length() + 1, close),
            Double.parseDouble(line.substring(close + 1).trim()));
      } else if (line.startsWith(name + " ")) {
        series.put("", Double.parseDouble(line.substring(name.length() + 1).trim()));
      }
    }
    return series;
  }

  /** The sum of every series of a metric, 0 when it has none yet. */
  double metric(String name) {
    return series(name).values().stream().mapToDouble(Double::doubleValue).sum();
  }

  static void sleep(Duration duration) {
    try {
      Thread.sleep(duration.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  @Override
  public void close() {
    server.close();
  }
}
