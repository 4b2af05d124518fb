package io.tally.chaos;

import io.tally.local.ClickJobProcess;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Scenario 9: 64 clients ask the stats API for what scans the most (the top links of a year over
 * 5,000 links with a year of day rows, a search over every link's URL) while redirects to those
 * links, most of them not yet cached, go on. The read side has connections of its own: every
 * redirect is answered 302 and counted, and every stats request is answered 200 or, once its
 * connections are all taken, 503 (the other claims are {@link OutageScenario}'s).
 */
final class StatsOverloadScenario extends OutageScenario {

  private static final int LINKS = 5_000;
  private static final int DAYS = 366;
  private static final int CLIENTS = 64;
  private static final String[] HEAVY = {
    "/api/top?from=366d&limit=1000",
    "/api/links?q=articles%2Fs4&limit=200",
    "/api/links?limit=200",
    "/api/top?from=300d&to=1d&limit=100"
  };

  private final Map<Integer, AtomicLong> answers = new ConcurrentHashMap<>();
  private final List<String> unexpected = new ArrayList<>();
  private volatile boolean loading;
  private ExecutorService clients;

  @Override
  public String name() {
    return "stats-overload";
  }

  @Override
  public String title() {
    return "9. 64 clients on the heaviest stats reads during redirects: redirects answer 302, every"
        + " click counted";
  }

  /**
   * The rate limits off: this is the read side's own protection under load, which limits per key
   * would spare it (scenario 11, abuse, has the limits).
   */
  @Override
  Map<String, String> webEnv() {
    Map<String, String> env = new java.util.HashMap<>(super.webEnv());
    env.put("TALLY_LIMIT_STATS_PER_MINUTE", "0");
    env.put("TALLY_LIMIT_API_PER_MINUTE", "0");
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
      codes.add(String.format(Locale.ROOT, "s%04d", i));
    }
    stack.createLinks(codes);
    try (Connection c = stack.services().connect();
        Statement s = c.createStatement()) {
      s.execute(
          "INSERT INTO click_daily (code, day, clicks, bot_clicks, visitors) SELECT l.code,"
              + " current_date - d, 1 + (length(l.code) * d) % 97, 1, d % 13 FROM links l,"
              + " generate_series(1, "
              + DAYS
              + ") d"
              + " WHERE l.code LIKE 's%' ON CONFLICT DO NOTHING");
      s.execute("ANALYZE");
    }
    return codes;
  }

  @Override
  void fault(ChaosStack stack) {
    loading = true;
  }

  @Override
  void whileDown(ChaosStack stack, ClickJobProcess job, int webPort, Outcome outcome) {
    if (clients != null) {
      return;
    }
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    clients = Executors.newFixedThreadPool(CLIENTS);
    for (int i = 0; i < CLIENTS; i++) {
      String path = HEAVY[i % HEAVY.length];
      clients.submit(
          () -> {
            while (loading) {
              ask(http, webPort, path);
            }
          });
    }
  }

  private void ask(HttpClient http, int port, String path) {
    try {
      HttpResponse<String> answer =
          http.send(
              HttpRequest.newBuilder(URI.create("http://localhost:" + port + path))
                  .header("Authorization", "Bearer " + ChaosStack.API_KEY)
                  .timeout(Duration.ofSeconds(30))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      answers.computeIfAbsent(answer.statusCode(), s -> new AtomicLong()).incrementAndGet();
      boolean busy =
          answer.statusCode() == 503 && answer.headers().firstValue("Retry-After").isPresent();
      if (answer.statusCode() != 200 && !busy) {
        synchronized (unexpected) {
          unexpected.add(answer.statusCode() + " " + answer.body());
        }
      }
    } catch (Exception e) {
      synchronized (unexpected) {
        unexpected.add(e.toString());
      }
    }
  }

  @Override
  void heal(ChaosStack stack) throws Exception {
    loading = false;
    if (clients != null) {
      clients.shutdown();
      clients.awaitTermination(60, TimeUnit.SECONDS);
    }
  }

  @Override
  void afterLoad(ChaosStack stack, Outcome outcome) {
    Map<Integer, Long> byStatus = new TreeMap<>();
    answers.forEach((status, n) -> byStatus.put(status, n.get()));
    outcome.check(
        "every stats request answered 200, or 503 with Retry-After when busy",
        unexpected.isEmpty(),
        unexpected.isEmpty()
            ? "stats answers " + byStatus
            : unexpected.size() + " others, first: " + unexpected.get(0));
    outcome.check(
        "the read side was overloaded (some stats requests answered 503)",
        byStatus.getOrDefault(503, 0L) > 0,
        "stats answers " + byStatus);
  }
}
