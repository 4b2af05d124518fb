package io.tally.redirect.stats;

import io.tally.redirect.links.Link;
import io.tally.redirect.links.LinkStore;
import java.sql.Connection;
import java.sql.Date;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import javax.sql.DataSource;

/**
 * The stats queries. Each reads the buckets the streaming job writes (minutes, hours, days, hourly
 * breakdowns), never raw events, so a 90-day chart reads at most 90 day rows or 2,160 hour rows.
 */
public final class StatsStore {

  /** The streaming job's name in {@code stream_progress}. */
  public static final String CLICK_JOB = "tally-click-count";

  /**
   * The driver's own bound on a stats query, behind the server's statement timeout of the stats
   * pool.
   */
  private static final int QUERY_TIMEOUT_SECONDS = 10;

  /** PostgreSQL's SQLSTATE for a statement cancelled, here by its statement timeout. */
  private static final String QUERY_CANCELED = "57014";

  private final DataSource dataSource;

  /**
   * @param dataSource the read side's own pool, apart from the redirects' (see {@code
   *     RedirectWebServer})
   */
  public StatsStore(DataSource dataSource) {
    this.dataSource = dataSource;
  }

  /**
   * The read side cannot answer now: every stats connection is taken, or the query ran too long.
   */
  public static final class Overloaded extends RuntimeException {
    Overloaded(String message, SQLException cause) {
      super(message, cause);
    }
  }

  /** One bucket of a series; {@code visitors} is null for minutes, which do not count visitors. */
  public record Point(Instant t, long clicks, long botClicks, Long visitors) {}

  /** A day's exact unique visitors and its stored visitor sketch, null when it has none. */
  public record DayVisitors(long visitors, byte[] sketch) {}

  /** A value of a dimension and its clicks. */
  public record ValueCount(String value, long clicks) {}

  /** A link and its clicks over a range. */
  public record CodeCount(String code, long clicks) {}

  /** A link in the links list, with its all-time human clicks. */
  public record ListedLink(Link link, long clicks) {}

  /** A tag, how many links carry it, and their clicks in a range. */
  public record TagCount(String tag, long links, long clicks, long botClicks) {}

  /** Where a links page ends: the last link's creation time and code. */
  public record Cursor(Instant createdAt, String code) {}

  /** One page of links, newest first; {@code next} is null on the last page. */
  public record LinkPage(List<ListedLink> links, Cursor next) {}

  /**
   * Every bucket of the range in order, empty ones as zeros: read from the interval's own table
   * when the range's buckets are the stored ones, else added up from the stored hours (local days
   * of a zone of whole-hour offsets) or minutes (hours and days of any other zone), which carry no
   * visitors of the local bucket ({@link #sourceOf}).
   */
  public List<Point> series(String code, StatsRange range) {
    return series(code, range, sourceOf(range));
  }

  /**
   * The same, read from the given stored buckets, each added up into the range's bucket it starts
   * in.
   */
  public List<Point> series(String code, StatsRange range, Interval source) {
    String sql =
        switch (source) {
          case MINUTE ->
              "SELECT minute, clicks, bot_clicks, NULL FROM click_counts WHERE code = ? AND minute"
                  + " >= ? AND minute < ?";
          case HOUR ->
              "SELECT hour, clicks, bot_clicks, visitors FROM click_hourly WHERE code = ? AND hour"
                  + " >= ? AND hour < ?";
          case DAY ->
              "SELECT day, clicks, bot_clicks, visitors FROM click_daily WHERE code = ? AND day >="
                  + " ? AND day < ?";
        };
    boolean ownBuckets = source == range.interval();
    Map<Instant, Point> stored = new HashMap<>();
    query(
        sql,
        ps -> {
          ps.setString(1, code);
          bindRange(ps, 2, source, range.from(), range.to());
        },
        rs -> {
          Instant at =
              source == Interval.DAY
                  ? rs.getDate(1).toLocalDate().atStartOfDay(ZoneOffset.UTC).toInstant()
                  : rs.getTimestamp(1).toInstant();
          if (ownBuckets) {
            long visitors = rs.getLong(4);
            Long counted = rs.wasNull() ? null : visitors;
            stored.put(at, new Point(at, rs.getLong(2), rs.getLong(3), counted));
          } else {
            Instant t = range.interval().floor(at, range.zone());
            Point sum = stored.getOrDefault(t, new Point(t, 0, 0, null));
            stored.put(
                t,
                new Point(t, sum.clicks() + rs.getLong(2), sum.botClicks() + rs.getLong(3), null));
          }
        });
    List<Point> points = new ArrayList<>();
    Long noVisitors = ownBuckets && range.interval() != Interval.MINUTE ? 0L : null;
    for (Instant t : range.buckets()) {
      points.add(stored.getOrDefault(t, new Point(t, 0, 0, noVisitors)));
    }
    return points;
  }

  /**
   * The stored buckets a range's buckets are made of: its own interval's when they are the stored
   * ones (minutes always; hours and days in UTC; hours in a zone of whole-hour offsets), hours for
   * the local days of such a zone, minutes for the hours and days of any other zone.
   */
  public static Interval sourceOf(StatsRange range) {
    if (range.interval() == Interval.MINUTE || range.isUtc()) {
      return range.interval();
    }
    if (range.inWholeHours()) {
      return Interval.HOUR;
    }
    return Interval.MINUTE;
  }

  /**
   * The days from {@code from} to {@code to} (UTC day starts) that had visitors, each with its
   * exact visitors and its sketch (null for a day from before sketches were kept).
   */
  public List<DayVisitors> daysVisitors(String code, Instant from, Instant to) {
    List<DayVisitors> days = new ArrayList<>();
    query(
        "SELECT visitors, visitor_sketch FROM click_daily WHERE code = ? AND day >= ? AND day < ?"
            + " AND (visitors > 0 OR visitor_sketch IS NOT NULL)",
        ps -> {
          ps.setString(1, code);
          bindRange(ps, 2, Interval.DAY, from, to);
        },
        rs -> days.add(new DayVisitors(rs.getLong(1), rs.getBytes(2))));
    return days;
  }

  /** The values of one dimension over whole hours ({@link #BREAKDOWN}), largest first. */
  public List<ValueCount> breakdown(
      String code, Dimension dimension, Instant from, Instant to, int limit) {
    List<ValueCount> values = new ArrayList<>();
    query(
        BREAKDOWN + " ORDER BY n DESC, shown LIMIT ?",
        ps -> ps.setInt(bindBreakdown(ps, code, dimension, from, to), limit),
        rs -> values.add(new ValueCount(rs.getString(1), rs.getLong(2))));
    return values;
  }

  /**
   * The clicks of the given values of one dimension over whole hours, counted as {@link #breakdown}
   * counts them; a value without clicks in the range is left out.
   */
  public Map<String, Long> breakdownOf(
      String code, Dimension dimension, Instant from, Instant to, List<String> values) {
    Map<String, Long> counts = new HashMap<>();
    if (values.isEmpty()) {
      return counts;
    }
    query(
        "SELECT shown, n FROM (" + BREAKDOWN + ") counted WHERE shown = ANY (?)",
        ps ->
            ps.setArray(
                bindBreakdown(ps, code, dimension, from, to),
                ps.getConnection().createArrayOf("text", values.toArray())),
        rs -> counts.put(rs.getString(1), rs.getLong(2)));
    return counts;
  }

  /**
   * One dimension's values and their clicks over whole hours: the whole UTC days inside the range
   * from the day rows, the hours before the first and after the last of them from the hour rows. A
   * value PostgreSQL refused is stored under a stand-in, {@code (other) } and a digest of it, which
   * counts as {@code (other)}.
   */
  private static final String BREAKDOWN =
      "SELECT CASE WHEN value LIKE '(other) %' THEN '(other)' ELSE value END AS shown, SUM(n) AS"
          + " n FROM (SELECT value, clicks AS n FROM click_dimensions_hourly WHERE code = ? AND"
          + " dimension = ? AND (hour >= ? AND hour < ? OR hour >= ? AND hour < ?) UNION ALL"
          + " SELECT value, clicks FROM click_dimensions_daily WHERE code = ? AND dimension = ?"
          + " AND day >= ? AND day < ?) breakdown GROUP BY shown";

  /** Binds {@link #BREAKDOWN}'s parameters; returns the index of the next one. */
  private static int bindBreakdown(
      PreparedStatement ps, String code, Dimension dimension, Instant from, Instant to)
      throws SQLException {
    Instant firstDay =
        from.truncatedTo(ChronoUnit.DAYS).equals(from)
            ? from
            : from.truncatedTo(ChronoUnit.DAYS).plus(1, ChronoUnit.DAYS);
    Instant lastDay = to.truncatedTo(ChronoUnit.DAYS);
    if (!firstDay.isBefore(lastDay)) {
      firstDay = to;
      lastDay = to;
    }
    ps.setString(1, code);
    ps.setString(2, dimension.label());
    bindRange(ps, 3, Interval.HOUR, from, firstDay);
    bindRange(ps, 5, Interval.HOUR, lastDay, to);
    ps.setString(7, code);
    ps.setString(8, dimension.label());
    bindRange(ps, 9, Interval.DAY, firstDay, lastDay);
    return 11;
  }

  /**
   * The links with the most human clicks in the range, read from hours or, for long ranges, days.
   */
  public List<CodeCount> top(Instant from, Instant to, Interval table, int limit) {
    String sql =
        table == Interval.DAY
            ? "SELECT code, SUM(clicks) AS n FROM click_daily WHERE day >= ? AND day < ? GROUP BY"
                + " code"
            : "SELECT code, SUM(clicks) AS n FROM click_hourly WHERE hour >= ? AND hour < ? GROUP"
                + " BY code";
    List<CodeCount> links = new ArrayList<>();
    query(
        sql + " HAVING SUM(clicks) > 0 ORDER BY n DESC, code LIMIT ?",
        ps -> {
          bindRange(ps, 1, table, from, to);
          ps.setInt(3, limit);
        },
        rs -> links.add(new CodeCount(rs.getString(1), rs.getLong(2))));
    return links;
  }

  /**
   * The tags of every link, by their links' human clicks in the range (read from hours or, for long
   * ranges, days), with how many links carry each; a tag whose links had no clicks is listed with
   * 0.
   */
  public List<TagCount> tags(Instant from, Instant to, Interval table, int limit) {
    String rows =
        table == Interval.DAY
            ? "click_daily c ON c.code = l.code AND c.day >= ? AND c.day < ?"
            : "click_hourly c ON c.code = l.code AND c.hour >= ? AND c.hour < ?";
    List<TagCount> tags = new ArrayList<>();
    query(
        "SELECT t.tag, count(DISTINCT l.code), COALESCE(SUM(c.clicks), 0),"
            + " COALESCE(SUM(c.bot_clicks), 0) FROM links l CROSS JOIN LATERAL unnest(l.tags) AS"
            + " t(tag) LEFT JOIN "
            + rows
            + " GROUP BY t.tag ORDER BY 3 DESC, t.tag LIMIT ?",
        ps -> {
          bindRange(ps, 1, table, from, to);
          ps.setInt(3, limit);
        },
        rs -> tags.add(new TagCount(rs.getString(1), rs.getLong(2), rs.getLong(3), rs.getLong(4))));
    return tags;
  }

  /**
   * A page of links, newest first, whose code or URL contains {@code search} (any case) and that
   * carry {@code tag}, each when given.
   */
  public LinkPage links(int limit, Cursor after, String search, String tag) {
    StringBuilder sql =
        new StringBuilder(
            "SELECT "
                + LinkStore.COLUMNS
                + ", COALESCE((SELECT SUM(d.clicks) FROM click_daily d WHERE d.code = l.code), 0)"
                + " FROM links l WHERE TRUE");
    if (search != null) {
      sql.append(" AND (l.code ILIKE ? ESCAPE '\\' OR l.url ILIKE ? ESCAPE '\\')");
    }
    if (tag != null) {
      sql.append(" AND l.tags @> ARRAY[?]::text[]");
    }
    if (after != null) {
      sql.append(" AND (l.created_at, l.code) < (?, ?)");
    }
    sql.append(" ORDER BY l.created_at DESC, l.code DESC LIMIT ?");
    List<ListedLink> links = new ArrayList<>();
    query(
        sql.toString(),
        ps -> {
          int i = 1;
          if (search != null) {
            String pattern =
                "%" + search.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%";
            ps.setString(i++, pattern);
            ps.setString(i++, pattern);
          }
          if (tag != null) {
            ps.setString(i++, tag);
          }
          if (after != null) {
            ps.setTimestamp(i++, Timestamp.from(after.createdAt()));
            ps.setString(i++, after.code());
          }
          ps.setInt(i, limit + 1);
        },
        rs -> links.add(new ListedLink(LinkStore.read(rs), rs.getLong(7))));
    if (links.size() <= limit) {
      return new LinkPage(links, null);
    }
    Link last = links.get(limit - 1).link();
    return new LinkPage(links.subList(0, limit), new Cursor(last.createdAt(), last.code()));
  }

  /**
   * How far the streaming job has got, if it has closed any minute.
   *
   * @param closedBefore the end of the minutes it has closed: their on-time clicks are all counted
   * @param allowedLateness how long after a period's end a late click still changes it
   */
  public record Progress(Instant closedBefore, Duration allowedLateness) {

    /** Whether a period ending at {@code end} can no longer change but by reconcile. */
    public boolean isFinal(Instant end) {
      return !end.plus(allowedLateness).isAfter(closedBefore);
    }
  }

  /** The streaming job's progress, if it has closed any minute. */
  public Optional<Progress> progress() {
    Progress[] progress = {null};
    query(
        "SELECT closed_before, allowed_lateness_ms FROM stream_progress WHERE job = ?",
        ps -> ps.setString(1, CLICK_JOB),
        rs ->
            progress[0] =
                new Progress(rs.getTimestamp(1).toInstant(), Duration.ofMillis(rs.getLong(2))));
    return Optional.ofNullable(progress[0]);
  }

  /** A minute of a link that reconcile repaired, and when the run that repaired it finished. */
  public record Repair(Instant minute, Instant repairedAt) {}

  /** The link's minutes in the range that finished repair runs of reconcile changed. */
  public List<Repair> repairs(String code, Instant from, Instant to) {
    List<Repair> repairs = new ArrayList<>();
    query(
        "SELECT d.minute, r.finished_at FROM reconcile_drift d JOIN reconcile_runs r ON r.id ="
            + " d.run_id WHERE d.code = ? AND d.minute >= ? AND d.minute < ? AND d.repaired AND"
            + " r.mode = 'repair' AND r.status = 'finished'",
        ps -> {
          ps.setString(1, code);
          bindRange(ps, 2, Interval.MINUTE, from, to);
        },
        rs ->
            repairs.add(
                new Repair(rs.getTimestamp(1).toInstant(), rs.getTimestamp(2).toInstant())));
    return repairs;
  }

  /**
   * A link's ledger over whole UTC hours: what was counted, what the job set aside, the reconcile
   * runs that changed its minutes, and the clicks every redirect-web instance dropped.
   *
   * @param clicks human clicks counted
   * @param botClicks bot clicks counted
   * @param duplicates copies dropped as duplicates
   * @param late clicks too late to count, dead-lettered
   * @param refusedRows rows PostgreSQL refused, dead-lettered
   * @param runs the reconcile runs that changed a minute of the link in the range, newest first
   * @param sendDrops clicks of any link redirect-web answered but could not hand to Kafka
   * @param dropInstances the redirect-web instances that dropped any
   */
  public record Audit(
      long clicks,
      long botClicks,
      long duplicates,
      long late,
      long refusedRows,
      List<AuditRun> runs,
      long sendDrops,
      int dropInstances) {}

  /**
   * A reconcile run as it touched one link: how many of its minutes it found different and the
   * link's clicks in them before and after.
   */
  public record AuditRun(
      long id,
      String mode,
      String status,
      Instant finishedAt,
      Instant rangeFrom,
      Instant rangeTo,
      long minutes,
      long clicksBefore,
      long clicksAfter,
      long botClicksBefore,
      long botClicksAfter,
      boolean repaired) {}

  /** The runs an audit lists at most: each is one line of the ledger. */
  public static final int AUDIT_RUNS = 50;

  /** The link's {@link Audit} from {@code from} to {@code to}, both whole UTC hours. */
  public Audit audit(String code, Instant from, Instant to) {
    // The link's hours: clicks counted, and what the job set aside.
    long[] hours = new long[5];
    query(
        "SELECT h.clicks, h.bot_clicks, l.duplicates, l.late, l.refused_rows FROM (SELECT"
            + " COALESCE(sum(clicks), 0) AS clicks, COALESCE(sum(bot_clicks), 0) AS bot_clicks"
            + " FROM click_hourly WHERE code = ? AND hour >= ? AND hour < ?) h, (SELECT"
            + " COALESCE(sum(duplicates), 0) AS duplicates, COALESCE(sum(late), 0) AS late,"
            + " COALESCE(sum(refused_rows), 0) AS refused_rows FROM link_ledger_hourly WHERE code"
            + " = ? AND hour >= ? AND hour < ?) l",
        ps -> {
          for (int table = 0; table < 2; table++) {
            ps.setString(1 + 3 * table, code);
            bindRange(ps, 2 + 3 * table, Interval.HOUR, from, to);
          }
        },
        rs -> {
          for (int i = 0; i < hours.length; i++) {
            hours[i] = rs.getLong(i + 1);
          }
        });
    List<AuditRun> runs = new ArrayList<>();
    query(
        "SELECT r.id, r.mode, r.status, r.finished_at, r.range_from, r.range_to, count(*),"
            + " COALESCE(sum(d.stored_clicks), 0), COALESCE(sum(d.recounted_clicks), 0),"
            + " COALESCE(sum(d.stored_bot_clicks), 0), COALESCE(sum(d.recounted_bot_clicks), 0),"
            + " bool_and(d.repaired) FROM reconcile_drift d JOIN reconcile_runs r ON r.id ="
            + " d.run_id WHERE d.code = ? AND d.minute >= ? AND d.minute < ? GROUP BY r.id ORDER"
            + " BY r.id DESC LIMIT "
            + AUDIT_RUNS,
        ps -> {
          ps.setString(1, code);
          bindRange(ps, 2, Interval.MINUTE, from, to);
        },
        rs -> {
          Timestamp finished = rs.getTimestamp(4);
          runs.add(
              new AuditRun(
                  rs.getLong(1),
                  rs.getString(2),
                  rs.getString(3),
                  finished == null ? null : finished.toInstant(),
                  rs.getTimestamp(5).toInstant(),
                  rs.getTimestamp(6).toInstant(),
                  rs.getLong(7),
                  rs.getLong(8),
                  rs.getLong(9),
                  rs.getLong(10),
                  rs.getLong(11),
                  rs.getBoolean(12)));
        });
    long[] drops = new long[2];
    query(
        "SELECT COALESCE(sum(dropped), 0), count(DISTINCT instance) FROM click_send_drops WHERE"
            + " minute >= ? AND minute < ?",
        ps -> bindRange(ps, 1, Interval.MINUTE, from, to),
        rs -> {
          drops[0] = rs.getLong(1);
          drops[1] = rs.getLong(2);
        });
    return new Audit(
        hours[0], hours[1], hours[2], hours[3], hours[4], runs, drops[0], (int) drops[1]);
  }

  private static void bindRange(
      PreparedStatement ps, int index, Interval interval, Instant from, Instant to)
      throws SQLException {
    if (interval == Interval.DAY) {
      ps.setDate(index, Date.valueOf(LocalDate.ofInstant(from, ZoneOffset.UTC)));
      ps.setDate(index + 1, Date.valueOf(LocalDate.ofInstant(to, ZoneOffset.UTC)));
    } else {
      ps.setTimestamp(index, Timestamp.from(from));
      ps.setTimestamp(index + 1, Timestamp.from(to));
    }
  }

  private interface Binder {
    void bind(PreparedStatement ps) throws SQLException;
  }

  private interface RowReader {
    void read(ResultSet rs) throws SQLException;
  }

  private void query(String sql, Binder binder, RowReader reader) {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setQueryTimeout(QUERY_TIMEOUT_SECONDS);
      binder.bind(ps);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          reader.read(rs);
        }
      }
    } catch (SQLTransientConnectionException e) {
      if (e.getCause() != null) {
        // The pool could not connect at all: the database is down, not busy.
        throw new LinkStore.StoreException("cannot read stats", e);
      }
      throw new Overloaded(
          "the stats API is busy: its connections are all in use; retry in a moment", e);
    } catch (SQLException e) {
      if (QUERY_CANCELED.equals(e.getSQLState())) {
        throw new Overloaded(
            "the query took longer than the stats API allows; retry later or ask for a shorter"
                + " range",
            e);
      }
      throw new LinkStore.StoreException("cannot read stats", e);
    }
  }
}
