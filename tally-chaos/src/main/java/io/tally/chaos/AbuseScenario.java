package io.tally.chaos;

import io.tally.local.ClickJobProcess;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.IntFunction;
import org.HdrHistogram.Histogram;

/**
 * Scenario 11: one client, behind the trusted proxy as behind an ingress, floods redirect-web with
 * distinct unknown codes, stats requests and link creations, while visitors from other addresses
 * follow 2,000 links, most of them never followed before. The flooder is answered 404 and then 429;
 * the visitors are answered 302 as fast as before the flood, every click counted, and PostgreSQL
 * sees no more connections than redirect-web's pools hold (the other claims are {@link
 * OutageScenario}'s).
 */
final class AbuseScenario extends OutageScenario {

  /** The flooder's address, apart from every visitor's ({@link RedirectLoad#CLIENT_ADDRESSES}). */
  static final String FLOODER = "198.51.100.66";

  private static final int LINKS = 2_000;
  private static final int UNKNOWN_PER_SECOND = 200;
  private static final int STATS_PER_SECOND = 60;
  private static final int CREATES_PER_SECOND = 20;
  private static final double P99_GOAL = 2.0;

  /** redirect-web's pools: the redirects' 32, the stats API's default 4, the code listener's 1. */
  private static final int POOLED_CONNECTIONS = 32 + 4 + 1;

  private final Map<String, Map<Integer, LongAdder>> answers = new ConcurrentHashMap<>();
  private final AtomicLong mostConnections = new AtomicLong();
  private volatile boolean flooding;
  private ExecutorService flooders;
  private Histogram quiet;
  private Histogram flooded;

  @Override
  public String name() {
    return "abuse";
  }

  @Override
  public String title() {
    return "11. One client floods unknown codes, stats and link creation: it gets 404s and 429s,"
        + " visitors keep their 302s and their speed, every click counted";
  }

  /**
   * Limits an operator of a small site might set, so that each flood meets its limit within the
   * fault however short; the defaults are ten times these.
   */
  @Override
  Map<String, String> webEnv() {
    Map<String, String> env = new HashMap<>(super.webEnv());
    env.put("TALLY_LIMIT_UNKNOWN_CODES_PER_MINUTE", "300");
    env.put("TALLY_LIMIT_API_PER_MINUTE", "1200");
    env.put("TALLY_LIMIT_CREATE_PER_MINUTE", "60");
    env.put("TALLY_LIMIT_STATS_PER_MINUTE", "300");
    return env;
  }

  @Override
  Duration length(ChaosSettings settings) {
    return settings.outage();
  }

  @Override
  List<String> links(ChaosStack stack) throws Exception {
    List<String> codes = new ArrayList<>();
    for (int i = 0; i < LINKS; i++) {
      codes.add(String.format(Locale.ROOT, "v%04d", i));
    }
    stack.createLinks(codes);
    return codes;
  }

  /**
   * A quiet run as long as the flood will be, to compare the visitors' p99 with; then the flood.
   */
  @Override
  void fault(ChaosStack stack) throws Exception {
    load.latenciesSinceLastAsked();
    Thread.sleep(stack.settings().outage().toMillis());
    quiet = load.latenciesSinceLastAsked();
    flooding = true;
  }

  @Override
  void whileDown(ChaosStack stack, ClickJobProcess job, int webPort, Outcome outcome)
      throws SQLException {
    if (flooders == null) {
      HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
      flooders = Executors.newFixedThreadPool(6);
      AtomicLong unknown = new AtomicLong();
      flood(
          http,
          "unknown codes",
          UNKNOWN_PER_SECOND,
          4,
          i -> get(webPort, "/flood-" + unknown.incrementAndGet()));
      flood(
          http,
          "stats",
          STATS_PER_SECOND,
          1,
          i ->
              withKey(
                  get(
                      webPort,
                      "/api/links/v"
                          + String.format(Locale.ROOT, "%04d", i % LINKS)
                          + "/stats?from=1h")));
      flood(
          http,
          "link creations",
          CREATES_PER_SECOND,
          1,
          i ->
              withKey(
                      HttpRequest.newBuilder(
                          URI.create("http://localhost:" + webPort + "/api/links")))
                  .header("X-Forwarded-For", FLOODER)
                  .header("Content-Type", "application/json")
                  .POST(
                      HttpRequest.BodyPublishers.ofString(
                          "{\"url\":\"https://spam.example/" + i + "\"}")));
    }
    mostConnections.accumulateAndGet(redirectWebConnections(stack), Math::max);
  }

  private HttpRequest.Builder get(int port, String path) {
    return HttpRequest.newBuilder(URI.create("http://localhost:" + port + path))
        .header("X-Forwarded-For", FLOODER)
        .GET();
  }

  private static HttpRequest.Builder withKey(HttpRequest.Builder request) {
    return request.header("Authorization", "Bearer " + ChaosStack.API_KEY);
  }

  /** Sends {@code perSecond} requests a second of one kind, on {@code threads} threads. */
  private void flood(
      HttpClient http,
      String kind,
      int perSecond,
      int threads,
      IntFunction<HttpRequest.Builder> request) {
    Map<Integer, LongAdder> byStatus =
        answers.computeIfAbsent(kind, k -> new ConcurrentHashMap<>());
    long periodNanos = 1_000_000_000L * threads / perSecond;
    for (int t = 0; t < threads; t++) {
      int first = t;
      flooders.submit(
          () -> {
            long next = System.nanoTime();
            for (int i = first; flooding; i += threads) {
              int status;
              try {
                status =
                    http.send(
                            request.apply(i).timeout(Duration.ofSeconds(10)).build(),
                            HttpResponse.BodyHandlers.discarding())
                        .statusCode();
              } catch (Exception e) {
                status = -1;
              }
              byStatus.computeIfAbsent(status, s -> new LongAdder()).increment();
              next += periodNanos;
              long wait = next - System.nanoTime();
              if (wait > 0) {
                TimeUnit.NANOSECONDS.sleep(wait);
              }
            }
            return null;
          });
    }
  }

  /** Connections to PostgreSQL opened by redirect-web's pools and its code listener. */
  private static long redirectWebConnections(ChaosStack stack) throws SQLException {
    try (Connection c = stack.services().connect();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE"
                    + " 'redirect-web%'")) {
      rs.next();
      return rs.getLong(1);
    }
  }

  @Override
  void heal(ChaosStack stack) throws Exception {
    flooding = false;
    flooded = load.latenciesSinceLastAsked();
    if (flooders != null) {
      flooders.shutdown();
      flooders.awaitTermination(30, TimeUnit.SECONDS);
    }
  }

  @Override
  void afterLoad(ChaosStack stack, Outcome outcome) {
    Map<String, Map<Integer, Long>> counts = new TreeMap<>();
    answers.forEach(
        (kind, byStatus) -> {
          Map<Integer, Long> statuses = new TreeMap<>();
          byStatus.forEach((status, n) -> statuses.put(status, n.sum()));
          counts.put(kind, statuses);
        });
    Map<Integer, Long> unknown = counts.getOrDefault("unknown codes", Map.of());
    outcome.check(
        "the flooder's unknown codes answered 404, then 429 once over its limit",
        unknown.getOrDefault(404, 0L) > 0
            && unknown.getOrDefault(429, 0L) > 0
            && unknown.keySet().stream().allMatch(s -> s == 404 || s == 429),
        "unknown codes " + unknown);
    for (String kind : List.of("stats", "link creations")) {
      Map<Integer, Long> statuses = counts.getOrDefault(kind, Map.of());
      outcome.check(
          "the flooder's " + kind + " limited (429) after some were served",
          statuses.getOrDefault(429, 0L) > 0
              && statuses.keySet().stream().allMatch(s -> s == 200 || s == 201 || s == 429),
          kind + " " + statuses);
    }
    double quietP99 = quiet.getValueAtPercentile(99) / 1e6;
    double floodP99 = flooded.getValueAtPercentile(99) / 1e6;
    outcome.check(
        "visitors' p99 during the flood within " + P99_GOAL + "x of a quiet run as long",
        floodP99 <= P99_GOAL * quietP99,
        String.format(
            Locale.ROOT,
            "p99 %.1f ms flooded, %.1f ms quiet (%.2fx), %d and %d redirects",
            floodP99,
            quietP99,
            floodP99 / quietP99,
            flooded.getTotalCount(),
            quiet.getTotalCount()));
    outcome.check(
        "PostgreSQL connections of redirect-web within its pools",
        mostConnections.get() <= POOLED_CONNECTIONS,
        "at most " + mostConnections.get() + " of " + POOLED_CONNECTIONS);
  }
}
