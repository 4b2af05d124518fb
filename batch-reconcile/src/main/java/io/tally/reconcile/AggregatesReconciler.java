package io.tally.reconcile;

import io.tally.counting.records.DimensionCount;
import java.sql.Connection;
import java.sql.Date;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.EnumMap;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Compares the recount of the hour, day and breakdown tables with the stored rows and, when asked,
 * makes them equal. Only periods wholly inside the range, closed (ended before the streaming job's
 * horizon) and covered by the log ({@link LogCoverage}) are touched: a period the range cuts, or
 * whose start retention has deleted from any partition, was recounted from part of its clicks.
 *
 * <p>Each step is one SQL statement per table, joining the staging table to the stored one: rows
 * that differ or are missing are written with the recount's values (which may lower them, unlike
 * the stream's upserts), and rows the log does not support are deleted. A row whose period starts
 * before the log's coverage counts as not covered.
 */
final class AggregatesReconciler {

  /**
   * What one table's comparison found; {@code from}..{@code to} is the span of whole closed periods
   * checked, {@code notCovered} the rows in it the log did not cover, and {@code clicksRemoved} of
   * {@code storedClicks} what a repair would take away from the covered rows.
   */
  record Result(
      Instant from,
      Instant to,
      long differing,
      long missing,
      long unsupported,
      long notCovered,
      long storedClicks,
      long clicksRemoved) {
    long changed() {
      return differing + missing + unsupported;
    }
  }

  private final Connection connection;

  /**
   * Where the log's coverage of the range starts, for every link ({@link LogCoverage#coveredFrom}).
   */
  private final Instant coveredFrom;

  AggregatesReconciler(Connection connection, Instant coveredFrom) {
    this.connection = connection;
    this.coveredFrom = coveredFrom;
  }

  /** Compares every aggregate table with its recount; changes nothing. */
  Map<AggregateTable, Result> compare(long runId, TimeRange range, Instant closedBefore)
      throws SQLException {
    Map<AggregateTable, Span> spans = new EnumMap<>(AggregateTable.class);
    for (AggregateTable t : AggregateTable.values()) {
      spans.put(t, Span.of(t, range, closedBefore));
    }
    Map<AggregateTable, Result> results = new EnumMap<>(AggregateTable.class);
    spans.forEach((t, span) -> results.put(t, new Result(span.from, span.to, 0, 0, 0, 0, 0, 0)));
    for (Map.Entry<AggregateTable, Span> e : spans.entrySet()) {
      if (!e.getValue().isEmpty()) {
        results.put(e.getKey(), compare(e.getKey(), runId, e.getValue().from, e.getValue().to));
      }
    }
    connection.commit();
    return results;
  }

  /** The whole closed periods of a table inside the range. */
  private record Span(Instant from, Instant to) {
    static Span of(AggregateTable t, TimeRange range, Instant closedBefore) {
      long length = t.period.toMillis();
      return new Span(
          Instant.ofEpochMilli(ceil(range.from().toEpochMilli(), length)),
          Instant.ofEpochMilli(
              Math.min(
                  floor(range.to().toEpochMilli(), length),
                  floor(closedBefore.toEpochMilli(), length))));
    }

    boolean isEmpty() {
      return !from.isBefore(to);
    }
  }

  private Result compare(AggregateTable t, long runId, Instant from, Instant to)
      throws SQLException {
    if (t.breakdown()) {
      adoptTheStreamsKeptValues(t, runId, from, to);
    }
    Statements sql = new Statements(t, coveredFrom);
    long missing;
    long differing;
    try (PreparedStatement ps =
        connection.prepareStatement(
            "SELECT count(*) FILTER (WHERE s.code IS NULL),"
                + " count(*) FILTER (WHERE s.code IS NOT NULL AND ("
                + sql.stored
                + ") IS DISTINCT FROM ("
                + sql.recounted
                + "))"
                + sql.inRecount)) {
      ps.setLong(1, runId);
      bindPeriods(ps, 2, t, from, to);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        missing = rs.getLong(1);
        differing = rs.getLong(2);
      }
    }
    long orphans =
        count(
            "SELECT count(*)" + sql.unsupported,
            ps -> {
              bindPeriods(ps, 1, t, from, to);
              ps.setLong(3, runId);
            });
    String keys = String.join(", ", t.keys);
    long notCovered =
        count(
            "SELECT count(*) FROM (SELECT "
                + keys
                + " FROM "
                + t.table
                + " WHERE "
                + sql.inSpan
                + " UNION SELECT "
                + keys
                + " FROM "
                + t.staging
                + " WHERE run_id = ? AND "
                + sql.inSpan
                + ") a WHERE NOT "
                + sql.covered("a"),
            ps -> {
              bindPeriods(ps, 1, t, from, to);
              ps.setLong(3, runId);
              bindPeriods(ps, 4, t, from, to);
            });
    String storedClicks =
        t.clickValues.stream().map(v -> "s." + v).collect(Collectors.joining(" + "));
    String removed =
        t.clickValues.stream()
            .map(v -> "GREATEST(s." + v + " - COALESCE(r." + v + ", 0), 0)")
            .collect(Collectors.joining(" + "));
    long stored;
    long clicksRemoved;
    try (PreparedStatement ps =
        connection.prepareStatement(
            "SELECT COALESCE(sum("
                + storedClicks
                + "), 0)::bigint,"
                + " COALESCE(sum("
                + removed
                + "), 0)::bigint FROM "
                + t.table
                + " s LEFT JOIN "
                + t.staging
                + " r ON "
                + sql.join
                + " AND r.run_id = ? WHERE s."
                + t.periodColumn
                + " >= ? AND s."
                + t.periodColumn
                + " < ? AND "
                + sql.covered("s"))) {
      ps.setLong(1, runId);
      bindPeriods(ps, 2, t, from, to);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        stored = rs.getLong(1);
        clicksRemoved = rs.getLong(2);
      }
    }
    return new Result(from, to, differing, missing, orphans, notCovered, stored, clicksRemoved);
  }

  /**
   * Where a (link, hour, dimension) had more values than it keeps, the stream and the recount keep
   * the same ones, those of least rank (ADR-006 step 7), but rows written by releases before that
   * kept the first values they met, in another order than the recount meets them: which values are
   * counted under {@code (other)} may differ, and that is not drift. Such a group whose clicks add
   * up to the same total on both sides is judged by that total: its stored rows replace its recount
   * in the staging table, so the comparison finds them equal. A group whose totals differ is
   * compared, and repaired, row by row.
   */
  private void adoptTheStreamsKeptValues(AggregateTable t, long runId, Instant from, Instant to)
      throws SQLException {
    String period = t.periodColumn;
    String settled = "settled_" + t.table;
    String groups =
        " SELECT code, dimension, "
            + period
            + ", sum(clicks) AS clicks, bool_or(value = '"
            + DimensionCount.OTHER
            + "') AS overflowed FROM %s WHERE %s "
            + period
            + " >= ? AND "
            + period
            + " < ? GROUP BY code, dimension, "
            + period;
    String sameGroup =
        " ON s.code = g.code AND s.dimension = g.dimension AND s." + period + " = g." + period;
    try (PreparedStatement settle =
            connection.prepareStatement(
                "CREATE TEMPORARY TABLE "
                    + settled
                    + " ON COMMIT DROP AS"
                    + " SELECT s.code, s.dimension, s."
                    + period
                    + " FROM ("
                    + groups.formatted(t.table, "")
                    + ") s JOIN ("
                    + groups.formatted(t.staging, "run_id = ? AND")
                    + ") r"
                    + " ON s.code = r.code AND s.dimension = r.dimension AND s."
                    + period
                    + " = r."
                    + period
                    + " WHERE (s.overflowed OR r.overflowed) AND s.clicks = r.clicks");
        PreparedStatement drop =
            connection.prepareStatement(
                "DELETE FROM "
                    + t.staging
                    + " s USING "
                    + settled
                    + " g"
                    + sameGroup.replace(" ON ", " WHERE s.run_id = ? AND "));
        PreparedStatement adopt =
            connection.prepareStatement(
                "INSERT INTO "
                    + t.staging
                    + " (code, "
                    + period
                    + ", dimension, value, clicks, run_id) SELECT s.code, s."
                    + period
                    + ", s.dimension, s.value, s.clicks, ? FROM "
                    + t.table
                    + " s JOIN "
                    + settled
                    + " g"
                    + sameGroup)) {
      bindPeriods(settle, 1, t, from, to);
      settle.setLong(3, runId);
      bindPeriods(settle, 4, t, from, to);
      settle.executeUpdate();
      drop.setLong(1, runId);
      drop.executeUpdate();
      adopt.setLong(1, runId);
      adopt.executeUpdate();
    }
  }

  /**
   * Makes the covered rows that {@link #compare} found different equal to the recount, one
   * transaction per table.
   */
  void repair(long runId, Map<AggregateTable, Result> results) throws SQLException {
    for (Map.Entry<AggregateTable, Result> e : results.entrySet()) {
      AggregateTable t = e.getKey();
      Result r = e.getValue();
      if (r.changed() == 0) {
        continue;
      }
      Statements sql = new Statements(t, coveredFrom);
      String columns = String.join(", ", t.keys) + ", " + String.join(", ", t.values);
      String select =
          t.keys.stream().map(k -> "r." + k).collect(Collectors.joining(", "))
              + ", "
              + sql.recounted;
      String set =
          t.values.stream().map(v -> v + " = EXCLUDED." + v).collect(Collectors.joining(", "));
      try (PreparedStatement upsert =
              connection.prepareStatement(
                  "INSERT INTO "
                      + t.table
                      + " ("
                      + columns
                      + ", updated_at)"
                      + " SELECT "
                      + select
                      + ", now()"
                      + sql.inRecount
                      + " AND (s.code IS NULL OR ("
                      + sql.stored
                      + ") IS DISTINCT FROM ("
                      + sql.recounted
                      + ")) ON CONFLICT ("
                      + String.join(", ", t.keys)
                      + ") DO UPDATE SET "
                      + set
                      + ", updated_at = now()");
          PreparedStatement delete = connection.prepareStatement("DELETE" + sql.unsupported)) {
        upsert.setLong(1, runId);
        bindPeriods(upsert, 2, t, r.from(), r.to());
        upsert.executeUpdate();
        bindPeriods(delete, 1, t, r.from(), r.to());
        delete.setLong(3, runId);
        delete.executeUpdate();
        connection.commit();
      } catch (SQLException ex) {
        connection.rollback();
        throw ex;
      }
    }
  }

  /** The SQL fragments of one table's comparison and repair. */
  private static final class Statements {
    final String join;
    final String stored;
    final String recounted;
    final String inSpan;
    final String inRecount;
    final String unsupported;
    private final AggregateTable table;
    private final Instant coveredFrom;

    Statements(AggregateTable t, Instant coveredFrom) {
      this.table = t;
      this.coveredFrom = coveredFrom;
      join = t.keys.stream().map(k -> "s." + k + " = r." + k).collect(Collectors.joining(" AND "));
      stored = t.values.stream().map(v -> "s." + v).collect(Collectors.joining(", "));
      recounted = t.values.stream().map(v -> "r." + v).collect(Collectors.joining(", "));
      inSpan = t.periodColumn + " >= ? AND " + t.periodColumn + " < ?";
      inRecount =
          " FROM "
              + t.staging
              + " r LEFT JOIN "
              + t.table
              + " s ON "
              + join
              + " WHERE r.run_id = ? AND r."
              + t.periodColumn
              + " >= ? AND r."
              + t.periodColumn
              + " < ? AND "
              + covered("r");
      unsupported =
          " FROM "
              + t.table
              + " s WHERE s."
              + t.periodColumn
              + " >= ? AND s."
              + t.periodColumn
              + " < ?"
              + " AND "
              + covered("s")
              + " AND NOT EXISTS (SELECT 1 FROM "
              + t.staging
              + " r WHERE r.run_id = ? AND "
              + join
              + ")";
    }

    /**
     * True for a row whose whole period the log covers. The instant is inlined, as ISO-8601 text
     * made by {@link Instant#toString}, so that the fragment can sit anywhere in a statement
     * without its own parameter.
     */
    String covered(String alias) {
      return table.periodStart(alias) + " >= TIMESTAMPTZ '" + coveredFrom + "'";
    }
  }

  private interface Binder {
    void bind(PreparedStatement ps) throws SQLException;
  }

  private long count(String sql, Binder binder) throws SQLException {
    try (PreparedStatement ps = connection.prepareStatement(sql)) {
      binder.bind(ps);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  private static void bindPeriods(
      PreparedStatement ps, int index, AggregateTable t, Instant from, Instant to)
      throws SQLException {
    if (t.dated()) {
      ps.setDate(index, Date.valueOf(LocalDate.ofInstant(from, ZoneOffset.UTC)));
      ps.setDate(index + 1, Date.valueOf(LocalDate.ofInstant(to, ZoneOffset.UTC)));
    } else {
      ps.setTimestamp(index, Timestamp.from(from));
      ps.setTimestamp(index + 1, Timestamp.from(to));
    }
  }

  private static long floor(long t, long length) {
    return Math.floorDiv(t, length) * length;
  }

  private static long ceil(long t, long length) {
    return -Math.floorDiv(-t, length) * length;
  }
}
