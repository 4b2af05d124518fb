package io.tally.redirect;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.schema.TallySchema;
import io.tally.testing.KafkaExtension;
import io.tally.testing.PostgresExtension;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The read side cannot starve the redirect: with a year of day rows for thousands of links, 64
 * clients asking at once for what scans the most (the top links of a year, a search over every
 * link's URL, a links page), redirects to links no cache holds keep answering 302 well within the
 * link lookup's timeout, and every stats request is answered: 200, or 429 or 503 with {@code
 * Retry-After} once the key or the read side's own connections are at their limits. One key's heavy
 * queries leave another key's charts their usual answer. The search is served by a trigram index.
 */
class StatsOverloadITCase {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();
  @RegisterExtension static final KafkaExtension KAFKA = new KafkaExtension();

  private static final int LINKS = 5_000;
  private static final int DAYS = 366;
  private static final int HEAVY_CLIENTS = 64;
  private static final String[] HEAVY = {
    "/api/top?from=366d&limit=1000",
    "/api/links?q=ample.org%2Fpage-4&limit=200",
    "/api/links?limit=200",
    "/api/top?from=300d&to=1d&limit=100"
  };

  private static String jdbcUrl;
  private static RunningRedirectWeb web;

  @BeforeAll
  static void start() throws Exception {
    jdbcUrl = PG.createDatabase("stats_overload");
    TallySchema.migrate(jdbcUrl, PG.user(), PG.password());
    try (Connection c = DriverManager.getConnection(jdbcUrl, PG.user(), PG.password());
        Statement s = c.createStatement()) {
      s.execute(
          "INSERT INTO links (code, url) SELECT 'load' || i, 'https://www.example.org/page-' || i"
              + " || '?ref=' || md5(i::text) FROM generate_series(1, "
              + LINKS
              + ") i");
      s.execute(
          "INSERT INTO click_daily (code, day, clicks, bot_clicks, visitors)"
              + " SELECT 'load' || i, current_date - d, (i * d) % 97, 1, (i + d) % 13"
              + " FROM generate_series(1, "
              + LINKS
              + ") i, generate_series(1, "
              + DAYS
              + ") d");
      s.execute("ANALYZE");
    }
    Map<String, String> env =
        RunningRedirectWeb.environment(
            jdbcUrl, PG.user(), PG.password(), KAFKA, KAFKA.newTopic("clicks-stats-overload", 1));
    web = RunningRedirectWeb.start(env);
  }

  @AfterAll
  static void stop() {
    if (web != null) {
      web.close();
    }
  }

  @Test
  void heavyStatsRequestsDoNotStarveUncachedRedirects() throws Exception {
    long calm = slowestRedirect(1, 100);
    Map<Integer, AtomicLong> statsAnswers = new ConcurrentHashMap<>();
    List<String> unexpected = new ArrayList<>();
    AtomicBoolean loading = new AtomicBoolean(true);
    ExecutorService clients = Executors.newFixedThreadPool(HEAVY_CLIENTS);
    for (int i = 0; i < HEAVY_CLIENTS; i++) {
      String path = HEAVY[i % HEAVY.length];
      clients.submit(
          () -> {
            while (loading.get()) {
              HttpResponse<String> answer =
                  web.get(path, "Authorization", "Bearer " + RunningRedirectWeb.API_KEY);
              statsAnswers
                  .computeIfAbsent(answer.statusCode(), s -> new AtomicLong())
                  .incrementAndGet();
              if (answer.statusCode() != 200 && !refusedForNow(answer)) {
                synchronized (unexpected) {
                  unexpected.add(answer.statusCode() + " " + answer.body());
                }
              }
            }
            return null;
          });
    }
    long underLoad;
    try {
      Thread.sleep(2_000);
      underLoad = slowestRedirect(101, 400);
    } finally {
      loading.set(false);
      clients.shutdown();
      assertThat(clients.awaitTermination(60, TimeUnit.SECONDS)).isTrue();
    }

    assertThat(unexpected).as("stats answers other than 200, 429 or a busy 503").isEmpty();
    assertThat(statsAnswers).as("stats answers by status").containsKey(429);
    assertThat(underLoad)
        .as(
            "slowest uncached redirect under load, ms (%d ms when calm; answers: %s)",
            calm, statsAnswers)
        .isLessThan(1_000);
  }

  /**
   * One key sends the heaviest queries from 16 threads at once, each thread pausing 100 ms after a
   * refusal as a client that reads {@code Retry-After} would; meanwhile another key reads a month's
   * chart of one link. Every chart is answered 200, none 503: the heavy key holds two of the pool's
   * connections at most. How fast the charts are under that load is a figure for a benchmark, not a
   * claim of this test.
   */
  @Test
  void oneKeysHeavyQueriesLeaveAnotherKeysChartsTheirUsualAnswer() throws Exception {
    String chart = "/api/links/load7/stats?from=30d";
    readChart(chart, 10);
    Map<Integer, AtomicLong> heavyAnswers = new ConcurrentHashMap<>();
    AtomicBoolean loading = new AtomicBoolean(true);
    ExecutorService heavyKey = Executors.newFixedThreadPool(16);
    for (int i = 0; i < 16; i++) {
      String path = HEAVY[i % 2];
      heavyKey.submit(
          () -> {
            while (loading.get()) {
              HttpResponse<String> answer =
                  web.get(path, "Authorization", "Bearer " + RunningRedirectWeb.API_KEY);
              heavyAnswers
                  .computeIfAbsent(answer.statusCode(), s -> new AtomicLong())
                  .incrementAndGet();
              if (answer.statusCode() != 200) {
                Thread.sleep(100);
              }
            }
            return null;
          });
    }
    try {
      Thread.sleep(1_000);
      readChart(chart, 200);
    } finally {
      loading.set(false);
      heavyKey.shutdown();
      assertThat(heavyKey.awaitTermination(60, TimeUnit.SECONDS)).isTrue();
    }

    assertThat(heavyAnswers.keySet())
        .as("the heavy key's answers by status: %s", heavyAnswers)
        .contains(200)
        .isSubsetOf(200, 429);
  }

  /**
   * A dashboard asks for a link's chart and its six breakdowns at once, with one key, more than the
   * key may run at once: the rest wait for them, and all seven are answered.
   */
  @Test
  void aDashboardsChartAndBreakdownsAskedTogetherAreAllAnswered() throws Exception {
    List<String> paths = new ArrayList<>(List.of("/api/links/load9/stats?from=7d"));
    for (String dimension : List.of("country", "referrer", "browser", "os", "device", "bot_kind")) {
      paths.add("/api/links/load9/breakdown?dimension=" + dimension + "&from=7d");
    }
    ExecutorService dashboard = Executors.newFixedThreadPool(paths.size());
    try {
      List<java.util.concurrent.Future<HttpResponse<String>>> answers = new ArrayList<>();
      for (String path : paths) {
        answers.add(
            dashboard.submit(
                () -> web.get(path, "Authorization", "Bearer " + RunningRedirectWeb.READ_API_KEY)));
      }
      for (int i = 0; i < paths.size(); i++) {
        HttpResponse<String> answer = answers.get(i).get(30, TimeUnit.SECONDS);
        assertThat(answer.statusCode()).as("%s: %s", paths.get(i), answer.body()).isEqualTo(200);
      }
    } finally {
      dashboard.shutdownNow();
    }
  }

  /** Reads {@code path} {@code times} times with the read-only key; each must answer 200. */
  private static void readChart(String path, int times) {
    for (int i = 0; i < times; i++) {
      HttpResponse<String> answer =
          web.get(path, "Authorization", "Bearer " + RunningRedirectWeb.READ_API_KEY);
      assertThat(answer.statusCode()).as("chart %s: %s", path, answer.body()).isEqualTo(200);
    }
  }

  /**
   * A 429 or a busy 503, each with {@code Retry-After}: the answer of a read side at its limits.
   */
  private static boolean refusedForNow(HttpResponse<String> answer) {
    boolean retry = answer.headers().firstValue("Retry-After").isPresent();
    String error = RunningRedirectWeb.json(answer).get("error").asText();
    return retry
        && ((answer.statusCode() == 503 && error.contains("stats API"))
            || answer.statusCode() == 429);
  }

  @Test
  void theLinkSearchCanUseATrigramIndex() throws Exception {
    try (Connection c = DriverManager.getConnection(jdbcUrl, PG.user(), PG.password());
        Statement s = c.createStatement()) {
      s.execute("SET enable_seqscan = off");
      StringBuilder plan = new StringBuilder();
      try (ResultSet rs =
          s.executeQuery("EXPLAIN SELECT code FROM links WHERE url ILIKE '%ample.org/page-4%'")) {
        while (rs.next()) {
          plan.append(rs.getString(1)).append('\n');
        }
      }
      assertThat(plan.toString()).contains("links_url_trgm");
    }
  }

  /**
   * Follows links {@code first} .. {@code last} once each (none is cached yet); all must redirect.
   * Returns the slowest, ms.
   */
  private static long slowestRedirect(int first, int last) {
    long slowest = 0;
    for (int i = first; i <= last; i++) {
      long start = System.nanoTime();
      HttpResponse<String> answer = web.get("/load" + i);
      long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
      assertThat(answer.statusCode())
          .as("redirect of /load%d after %d ms: %s", i, took, answer.body())
          .isEqualTo(302);
      slowest = Math.max(slowest, took);
    }
    return slowest;
  }
}
