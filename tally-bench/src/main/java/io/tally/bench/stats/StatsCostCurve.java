package io.tally.bench.stats;

import static io.tally.testing.Table.count;
import static io.tally.testing.Table.fmt;

import com.zaxxer.hikari.HikariDataSource;
import io.tally.bench.support.Columns;
import io.tally.bench.support.Histograms;
import io.tally.bench.support.Report;
import io.tally.bench.support.Sql;
import io.tally.local.LocalServices;
import io.tally.redirect.stats.Dimension;
import io.tally.redirect.stats.StatsRange;
import io.tally.redirect.stats.StatsStore;
import java.io.PrintStream;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.function.Function;
import java.util.function.ToDoubleFunction;
import org.HdrHistogram.Histogram;

/**
 * The stats queries' cost as data piles up: bucket tables holding 7, 30, 90 and 365 days (by
 * default) of the same links at the same density per day, grown in one run from the shortest to the
 * longest, and at each size the API's two queries timed over all the days held: the hourly chart
 * and the country breakdown of one link. Only the days grow, so the curve shows what a link's age
 * costs a dashboard read.
 */
public final class StatsCostCurve {

  /**
   * What to seed and time.
   *
   * @param days the sizes, in days, shortest first
   * @param links links seeded, each with every hour of every day: one hour row and a row per
   *     country
   * @param requests timed reads of each query at each size, after a fifth as many untimed
   */
  public record Settings(List<Integer> days, int links, int requests, long seed) {}

  private static final String[] COUNTRIES = {"US", "DE", "GB", "FR", "IN", "BR", "JP", "unknown"};
  private static final String CODE_PREFIX = "curve-";
  private static final List<String> BUCKET_TABLES =
      List.of("click_hourly", "click_daily", "click_dimensions_hourly", "click_dimensions_daily");

  private record Point(
      int days,
      long hourRows,
      long breakdownRows,
      Histogram chart,
      Histogram breakdown,
      Histogram both) {}

  private final LocalServices stack;
  private final Settings settings;
  private final PrintStream out;

  public StatsCostCurve(LocalServices stack, Settings settings, PrintStream out) {
    this.stack = stack;
    this.settings = settings;
    this.out = out;
  }

  public void run(Report report) throws Exception {
    List<Integer> days = settings.days();
    Instant end = Instant.now().truncatedTo(ChronoUnit.DAYS);
    List<Point> points = new ArrayList<>();
    try (HikariDataSource pool = StatsBenchmark.pool(stack)) {
      StatsStore store = new StatsStore(pool);
      emptyBuckets();
      int seeded = 0;
      for (int size : days) {
        long start = System.nanoTime();
        seed(end.minus(Duration.ofDays(size)), end.minus(Duration.ofDays(seeded)));
        seeded = size;
        long[] rows = rows();
        out.printf(
            Locale.ROOT,
            "stats curve: %d days seeded (%,d hour rows, %,d breakdown rows) in %.0f s%n",
            size,
            rows[0],
            rows[1],
            (System.nanoTime() - start) / 1e9);
        points.add(time(store, size, end, rows));
      }
      printPlans(days.get(days.size() - 1), end);
    }

    new Columns<Point>()
        .and("days", Point::days)
        .and("hour rows", p -> count(p.hourRows()))
        .and("breakdown rows", p -> count(p.breakdownRows()))
        .and("chart p50 ms", p -> fmt(Histograms.ms(p.chart(), 50), 2))
        .and("chart p99 ms", p -> fmt(Histograms.ms(p.chart(), 99), 2))
        .and("breakdown p50 ms", p -> fmt(Histograms.ms(p.breakdown(), 50), 2))
        .and("breakdown p99 ms", p -> fmt(Histograms.ms(p.breakdown(), 99), 2))
        .and("both p99 ms", p -> fmt(Histograms.ms(p.both(), 99), 2))
        .table(
            "Stats cost curve: one link's hourly chart and country breakdown over all the days held"
                + " ("
                + settings.links()
                + " links, every hour of every day, "
                + COUNTRIES.length
                + " countries; "
                + settings.requests()
                + " reads each)",
            points)
        .note(
            "Each read goes through redirect-web's StatsStore (pooled JDBC, no HTTP). The chart"
                + " reads 24 hour rows a day of the range, the breakdown 24 × "
                + COUNTRIES.length
                + ".")
        .print(out);

    Point first = points.get(0);
    Point last = points.get(points.size() - 1);
    String metric = last.days() + "d/" + first.days() + "d";
    ToDoubleFunction<Function<Point, Histogram>> growth =
        query -> Histograms.ms(query.apply(last), 99) / Histograms.ms(query.apply(first), 99);
    report.ratio("stats.p99", metric, growth.applyAsDouble(Point::both));
    report.ratio("stats.chart.p99", metric, growth.applyAsDouble(Point::chart));
    report.ratio("stats.breakdown.p99", metric, growth.applyAsDouble(Point::breakdown));
  }

  /** The curve starts from empty bucket tables, so that its rows are all they hold. */
  private void emptyBuckets() throws Exception {
    Sql.execute(
        stack,
        "TRUNCATE " + String.join(", ", BUCKET_TABLES),
        "INSERT INTO links (code, url, created_at) SELECT '"
            + CODE_PREFIX
            + "' || i, 'https://example.com/' || i,"
            + " now() - INTERVAL '3650 days' FROM generate_series(1, "
            + settings.links()
            + ") i ON CONFLICT DO NOTHING");
  }

  /**
   * Adds every link's buckets for the days from {@code from} to {@code to}, in time order as the
   * streaming job writes them (each hour's rows for every link together), so that one link's rows
   * lie scattered over the table as they do in production, not packed together as a link-by-link
   * load would leave them.
   */
  private void seed(Instant from, Instant to) throws Exception {
    String hours =
        """
        FROM generate_series(1, %s) i,
        generate_series(TIMESTAMPTZ '%s', TIMESTAMPTZ '%s' - INTERVAL '1 hour',
        INTERVAL '1 hour') h\
        """
            .formatted(settings.links(), from, to);
    String range =
        "code LIKE '%s%%' AND hour >= TIMESTAMPTZ '%s' AND hour < TIMESTAMPTZ '%s'"
            .formatted(CODE_PREFIX, from, to);
    List<String> statements =
        new ArrayList<>(
            List.of(
                "SELECT setseed(" + (settings.seed() % 1000) / 1000.0 + ")",
                """
                INSERT INTO click_hourly (code, hour, clicks, bot_clicks, visitors)
                SELECT '%s' || i, h, c, c / 20, c / 2
                FROM (SELECT i, h, 1 + floor(random() * 200)::int AS c %s) x ORDER BY h, i\
                """
                    .formatted(CODE_PREFIX, hours),
                """
                INSERT INTO click_dimensions_hourly (code, hour, dimension, value, clicks)
                SELECT '%s' || i, h, 'country', v, 1 + floor(random() * 25)::int
                %s, unnest(ARRAY['%s']) v ORDER BY h, i\
                """
                    .formatted(CODE_PREFIX, hours, String.join("','", COUNTRIES)),
                """
                INSERT INTO click_daily (code, day, clicks, bot_clicks, visitors)
                SELECT code, (hour AT TIME ZONE 'UTC')::date, sum(clicks), sum(bot_clicks),
                sum(visitors) FROM click_hourly WHERE %s GROUP BY 1, 2 ORDER BY 2, 1\
                """
                    .formatted(range),
                """
                INSERT INTO click_dimensions_daily (code, day, dimension, value, clicks)
                SELECT code, (hour AT TIME ZONE 'UTC')::date, dimension, value, sum(clicks)
                FROM click_dimensions_hourly WHERE %s GROUP BY 1, 2, 3, 4 ORDER BY 2, 1\
                """
                    .formatted(range)));
    // As autovacuum leaves a table that has settled: statistics current, visibility map set.
    BUCKET_TABLES.forEach(table -> statements.add("VACUUM ANALYZE " + table));
    Sql.execute(stack, statements.toArray(String[]::new));
  }

  private long[] rows() throws Exception {
    return Sql.firstRow(
        stack,
        "SELECT (SELECT count(*) FROM click_hourly), (SELECT count(*) FROM"
            + " click_dimensions_hourly)");
  }

  private Point time(StatsStore store, int days, Instant end, long[] rows) {
    SplittableRandom random = new SplittableRandom(settings.seed() + days);
    StatsRange range =
        StatsRange.parse(end.minus(Duration.ofDays(days)).toString(), end.toString(), "hour", end);
    Histogram chart = Histograms.newHistogram();
    Histogram breakdown = Histograms.newHistogram();
    Histogram both = Histograms.newHistogram();
    int warmup = Math.max(5, settings.requests() / 5);
    for (int i = 0; i < warmup + settings.requests(); i++) {
      String code = CODE_PREFIX + (1 + random.nextInt(settings.links()));
      long start = System.nanoTime();
      int points = store.series(code, range).size();
      long chartDone = System.nanoTime();
      store.breakdown(code, Dimension.COUNTRY, range.from(), range.to(), 10);
      long done = System.nanoTime();
      if (points != days * 24) {
        throw new IllegalStateException(
            "a " + days + "-day hourly chart has " + points + " points");
      }
      if (i >= warmup) {
        Histograms.record(chart, chartDone - start);
        Histograms.record(breakdown, done - chartDone);
        Histograms.record(both, done - start);
      }
    }
    return new Point(days, rows[0], rows[1], chart, breakdown, both);
  }

  /**
   * The plans of the two statements StatsStore runs (their text repeated here: the store does not
   * expose it), at the largest size, for what limits them.
   */
  private void printPlans(int days, Instant end) throws Exception {
    Timestamp from = Timestamp.from(end.minus(Duration.ofDays(days)));
    Timestamp to = Timestamp.from(end);
    out.println();
    out.println(
        "stats curve: query plans at "
            + days
            + " days (EXPLAIN (ANALYZE, BUFFERS), link "
            + CODE_PREFIX
            + "1)");
    try (Connection c = stack.connect()) {
      for (String sql :
          List.of(
              "SELECT hour, clicks, bot_clicks, visitors FROM click_hourly WHERE code = ? AND hour"
                  + " >= ? AND hour < ?",
              "SELECT value, SUM(clicks) AS n FROM click_dimensions_hourly WHERE code = ? AND"
                  + " dimension = ? AND hour >= ? AND hour < ? GROUP BY value ORDER BY n DESC,"
                  + " value LIMIT 10")) {
        try (PreparedStatement ps = c.prepareStatement("EXPLAIN (ANALYZE, BUFFERS) " + sql)) {
          int i = 1;
          ps.setString(i++, CODE_PREFIX + "1");
          if (sql.contains("dimension = ?")) {
            ps.setString(i++, Dimension.COUNTRY.label());
          }
          ps.setTimestamp(i++, from);
          ps.setTimestamp(i, to);
          try (ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
              out.println("    " + rs.getString(1));
            }
          }
        }
      }
    }
  }
}
