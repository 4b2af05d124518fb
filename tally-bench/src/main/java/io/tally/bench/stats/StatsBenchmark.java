package io.tally.bench.stats;

import static io.tally.testing.Table.fmt;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.tally.bench.redirect.CountingMode;
import io.tally.bench.redirect.RedirectFixture;
import io.tally.bench.support.Histograms;
import io.tally.bench.support.Report;
import io.tally.bench.support.Sql;
import io.tally.local.LocalServices;
import io.tally.redirect.RedirectWebServer;
import io.tally.redirect.stats.Dimension;
import io.tally.redirect.stats.StatsRange;
import io.tally.redirect.stats.StatsStore;
import io.tally.testing.Table;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import org.HdrHistogram.Histogram;

/**
 * {@code bench stats}: what reading buckets saves over reading raw events. Seeds {@code days} of
 * clicks for {@code links} links (Zipf-like: link i gets about {@code hottest / i} clicks an hour)
 * as a raw-events table, derives the buckets from it with SQL (so both hold the same clicks), then
 * times, side by side, a 90-day hourly chart plus a 30-day country breakdown of a busy link:
 * through redirect-web's HTTP API on the buckets, and as the equivalent SQL straight on the raw
 * table (no HTTP, which favours raw).
 */
public final class StatsBenchmark {

  /** What to seed and how long to measure. */
  public record Settings(
      int links, int days, int hottest, int busiest, int warmup, int requests, long seed) {}

  private static final String API_READ = "buckets via HTTP API";
  private static final String RAW_READ = "raw events via SQL";

  private final LocalServices stack;
  private final Settings settings;
  private final PrintStream out;
  private final HttpClient http = HttpClient.newHttpClient();
  private HikariDataSource pool;

  public StatsBenchmark(LocalServices stack, Settings settings, PrintStream out) {
    this.stack = stack;
    this.settings = settings;
    this.out = out;
  }

  public void run(Report report) throws Exception {
    Instant now = Instant.now();
    Instant end = now.truncatedTo(ChronoUnit.HOURS);
    long seedStart = System.nanoTime();
    long rawRows = seed(end.minus(Duration.ofDays(settings.days())), end);
    long[] buckets = deriveBuckets();
    out.printf(
        Locale.ROOT,
        "seeded %,d raw clicks over %d days for %d links in %.0f s; buckets: %,d hour rows,"
            + " %,d day rows, %,d breakdown rows%n",
        rawRows,
        settings.days(),
        settings.links(),
        (System.nanoTime() - seedStart) / 1e9,
        buckets[0],
        buckets[1],
        buckets[2]);

    // Pooled connections on both sides, as the API has: connection set-up is not what is compared.
    try (RedirectWebServer web = RedirectFixture.start(stack, CountingMode.ASYNC);
        HikariDataSource pool = pool(stack)) {
      this.pool = pool;
      print(timeReads("http://localhost:" + web.port(), new StatsStore(pool), now), report);
    }
  }

  /**
   * Times every read pair, and the API's own queries after them; the reads in the table's order.
   */
  private Map<String, Histogram> timeReads(String base, StatsStore store, Instant now)
      throws Exception {
    checkSameAnswer(base, "bench-1");
    Histogram api = Histograms.newHistogram();
    Histogram storeOnly = Histograms.newHistogram();
    Histogram raw = Histograms.newHistogram();
    Random random = new Random(settings.seed());
    for (int i = 0; i < settings.warmup() + settings.requests(); i++) {
      String code = "bench-" + (1 + random.nextInt(settings.busiest()));
      // Alternate the order so neither side always runs on a warmer cache.
      long apiNanos;
      long rawNanos;
      if (i % 2 == 0) {
        apiNanos = timeApi(base, code);
        rawNanos = timeRaw(code, now);
      } else {
        rawNanos = timeRaw(code, now);
        apiNanos = timeApi(base, code);
      }
      long storeNanos = timeStore(store, code);
      if (i >= settings.warmup()) {
        Histograms.record(api, apiNanos);
        Histograms.record(storeOnly, storeNanos);
        Histograms.record(raw, rawNanos);
      }
    }
    Map<String, Histogram> reads = new LinkedHashMap<>();
    reads.put(API_READ, api);
    reads.put("  of it the API's queries on the buckets", storeOnly);
    reads.put(RAW_READ, raw);
    return reads;
  }

  private void print(Map<String, Histogram> reads, Report report) {
    Table table =
        new Table(
            "Stats: 90-day hourly chart + 30-day country breakdown of one of the "
                + settings.busiest()
                + " busiest links, "
                + settings.requests()
                + " pairs",
            "read",
            "p50 ms",
            "p99 ms",
            "max ms");
    reads.forEach(
        (read, ns) ->
            table.row(
                read,
                fmt(Histograms.ms(ns, 50), 2),
                fmt(Histograms.ms(ns, 99), 2),
                fmt(Histograms.maxMs(ns), 2)));
    table.print(out);
    double api = Histograms.ms(reads.get(API_READ), 99);
    double raw = Histograms.ms(reads.get(RAW_READ), 99);
    report.ratio("stats.buckets/raw", "p99", api / raw);
    report.target(
        "stats buckets/raw p99 <= 0.01",
        String.format(Locale.ROOT, "%.3f", api / raw),
        api / raw <= 0.01,
        "buckets " + fmt(api, 2) + " ms vs raw " + fmt(raw, 2) + " ms");
  }

  private long seed(Instant from, Instant to) throws Exception {
    Sql.execute(
        stack,
        "CREATE TABLE bench_raw_clicks (code TEXT NOT NULL, ts TIMESTAMPTZ NOT NULL, country TEXT"
            + " NOT NULL, bot BOOLEAN NOT NULL, visitor TEXT NOT NULL)",
        "SELECT setseed(" + (settings.seed() % 1000) / 1000.0 + ")",
        """
        INSERT INTO links (code, url, created_at) SELECT 'bench-' || i, 'https://example.com/' || i,
        TIMESTAMPTZ '%s' FROM generate_series(1, %s) i\
        """
            .formatted(from, settings.links()),
        """
        INSERT INTO bench_raw_clicks SELECT 'bench-' || i, h + random() * INTERVAL '1 hour',
        (ARRAY['US','DE','GB','FR','IN','BR','JP','unknown'])[1 + floor(random() * 8)::int],
        random() < 0.05, 'v' || floor(random() * (10 + %2$s * 5 / i))::int
        FROM generate_series(1, %1$s) i,
        generate_series(TIMESTAMPTZ '%3$s', TIMESTAMPTZ '%4$s' - INTERVAL '1 hour',
        INTERVAL '1 hour') h,
        generate_series(1, GREATEST(0, floor(%2$s / i::float8 + random() - 0.5)::int)) k\
        """
            .formatted(settings.links(), settings.hottest(), from, to),
        "CREATE INDEX bench_raw_clicks_code_ts ON bench_raw_clicks (code, ts)",
        "ANALYZE bench_raw_clicks");
    return Sql.firstRow(stack, "SELECT count(*) FROM bench_raw_clicks")[0];
  }

  /**
   * The job's tables, computed from the raw clicks: the buckets hold exactly what raw holds.
   * Returns the hour, day and breakdown rows written.
   */
  private long[] deriveBuckets() throws Exception {
    String hour = "date_trunc('hour', ts AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'";
    String day = "(ts AT TIME ZONE 'UTC')::date";
    String counts =
        "count(*) FILTER (WHERE NOT bot), count(*) FILTER (WHERE bot), count(DISTINCT visitor)"
            + " FILTER (WHERE NOT bot) FROM bench_raw_clicks GROUP BY 1, 2";
    String countries =
        "'country', country, count(*) FROM bench_raw_clicks WHERE NOT bot GROUP BY 1, 2, 4";
    return Sql.execute(
        stack,
        "INSERT INTO click_hourly (code, hour, clicks, bot_clicks, visitors) SELECT code, "
            + hour
            + ", "
            + counts,
        "INSERT INTO click_daily (code, day, clicks, bot_clicks, visitors) SELECT code, "
            + day
            + ", "
            + counts,
        "INSERT INTO click_dimensions_hourly (code, hour, dimension, value, clicks) SELECT code, "
            + hour
            + ", "
            + countries,
        "INSERT INTO click_dimensions_daily (code, day, dimension, value, clicks) SELECT code, "
            + day
            + ", "
            + countries,
        "ANALYZE");
  }

  private long timeApi(String base, String code) throws Exception {
    long start = System.nanoTime();
    get(base + "/api/links/" + code + "/stats?from=90d&to=now&interval=hour");
    get(base + "/api/links/" + code + "/breakdown?dimension=country&from=30d&to=now&limit=10");
    return System.nanoTime() - start;
  }

  /** The API's own queries through its store, without HTTP and JSON. */
  private static long timeStore(StatsStore buckets, String code) {
    long start = System.nanoTime();
    Instant now = Instant.now();
    buckets.series(code, StatsRange.parse("90d", "now", "hour", now));
    StatsRange month = StatsRange.parse("30d", "now", "hour", now);
    buckets.breakdown(code, Dimension.COUNTRY, month.from(), month.to(), 10);
    return System.nanoTime() - start;
  }

  private long timeRaw(String code, Instant now) throws Exception {
    long start = System.nanoTime();
    try (Connection c = pool.getConnection();
        PreparedStatement chart =
            c.prepareStatement(
                "SELECT date_trunc('hour', ts AT TIME ZONE 'UTC'), count(*) FILTER (WHERE NOT bot),"
                    + " count(*) FILTER (WHERE bot), count(DISTINCT visitor) FILTER (WHERE NOT bot)"
                    + " FROM bench_raw_clicks WHERE code = ? AND ts >= ? AND ts < ? GROUP BY 1"
                    + " ORDER BY 1");
        PreparedStatement countries =
            c.prepareStatement(
                "SELECT country, count(*) AS n FROM bench_raw_clicks WHERE code = ? AND ts >= ? AND"
                    + " ts < ? AND NOT bot GROUP BY country ORDER BY n DESC LIMIT 10")) {
      drain(chart, code, now.minus(Duration.ofDays(90)), now);
      drain(countries, code, now.minus(Duration.ofDays(30)), now);
    }
    return System.nanoTime() - start;
  }

  private static void drain(PreparedStatement ps, String code, Instant from, Instant to)
      throws Exception {
    ps.setString(1, code);
    ps.setTimestamp(2, Timestamp.from(from));
    ps.setTimestamp(3, Timestamp.from(to));
    try (ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        rs.getLong(2);
      }
    }
  }

  /** A benchmark of two reads that disagree measures nothing: both must count the same clicks. */
  private void checkSameAnswer(String base, String code) throws Exception {
    String body =
        get(
            base
                + "/api/links/"
                + code
                + "/stats?from="
                + settings.days()
                + "d&to=now&interval=day");
    long apiClicks =
        Long.parseLong(body.replaceAll("(?s).*\"totals\":\\{\"clicks\":(\\d+).*", "$1"));
    long rawClicks =
        Sql.firstRow(
            stack, "SELECT count(*) FROM bench_raw_clicks WHERE code = '" + code + "' AND NOT bot")[
            0];
    if (rawClicks != apiClicks) {
      throw new IllegalStateException(
          "the API counts " + apiClicks + " clicks of " + code + ", raw " + rawClicks);
    }
  }

  private String get(String url) throws Exception {
    HttpResponse<String> response =
        http.send(
            HttpRequest.newBuilder(URI.create(url))
                .header("Authorization", "Bearer " + RedirectFixture.API_KEY)
                .build(),
            HttpResponse.BodyHandlers.ofString());
    if (response.statusCode() != 200) {
      throw new IllegalStateException(
          url + " answered " + response.statusCode() + ": " + response.body());
    }
    return response.body();
  }

  /** A small pool on the stack's database, as the stats API reads through one. */
  static HikariDataSource pool(LocalServices stack) {
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(stack.jdbcUrl());
    config.setUsername(stack.dbUser());
    config.setMaximumPoolSize(2);
    return new HikariDataSource(config);
  }
}
