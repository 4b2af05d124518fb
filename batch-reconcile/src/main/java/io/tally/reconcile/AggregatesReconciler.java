package io.tally.reconcile;

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
 * Compares the recount of the hour, day and breakdown tables with the stored rows and, unless a dry run,
 * makes them equal. Only periods wholly inside the range and closed (ended before the streaming job's
 * horizon) are touched: a period the range cuts was recounted from part of its clicks.
 *
 * <p>Both steps are one SQL statement each per table, joining the staging table to the stored one: rows
 * that differ or are missing are written with the recount's values (which may lower them, unlike the
 * stream's upserts), and rows the log does not support are deleted.
 */
final class AggregatesReconciler {

  /** What one table's comparison found; {@code from}..{@code to} is the span of whole closed periods checked. */
  record Result(Instant from, Instant to, long differing, long missing, long unsupported) {
    long changed() {
      return differing + missing + unsupported;
    }
  }

  private final Connection connection;

  AggregatesReconciler(Connection connection) {
    this.connection = connection;
  }

  Map<AggregateTable, Result> reconcile(long runId, TimeRange range, Instant closedBefore, boolean dryRun)
      throws SQLException {
    Map<AggregateTable, Result> results = new EnumMap<>(AggregateTable.class);
    for (AggregateTable t : AggregateTable.values()) {
      results.put(t, reconcile(t, runId, range, closedBefore, dryRun));
    }
    return results;
  }

  private Result reconcile(AggregateTable t, long runId, TimeRange range, Instant closedBefore, boolean dryRun)
      throws SQLException {
    long length = t.period.toMillis();
    Instant from = Instant.ofEpochMilli(ceil(range.from().toEpochMilli(), length));
    Instant to = Instant.ofEpochMilli(Math.min(floor(range.to().toEpochMilli(), length), floor(closedBefore.toEpochMilli(), length)));
    if (!from.isBefore(to)) {
      return new Result(from, to, 0, 0, 0);
    }
    String join = t.keys.stream().map(k -> "s." + k + " = r." + k).collect(Collectors.joining(" AND "));
    String stored = t.values.stream().map(v -> "s." + v).collect(Collectors.joining(", "));
    String recounted = t.values.stream().map(v -> "r." + v).collect(Collectors.joining(", "));
    String inRecount = " FROM " + t.staging + " r LEFT JOIN " + t.table + " s ON " + join
        + " WHERE r.run_id = ? AND r." + t.periodColumn + " >= ? AND r." + t.periodColumn + " < ?";
    String unsupported = " FROM " + t.table + " s WHERE s." + t.periodColumn + " >= ? AND s." + t.periodColumn + " < ?"
        + " AND NOT EXISTS (SELECT 1 FROM " + t.staging + " r WHERE r.run_id = ? AND " + join + ")";

    long missing;
    long differing;
    try (PreparedStatement ps = connection.prepareStatement("SELECT count(*) FILTER (WHERE s.code IS NULL),"
        + " count(*) FILTER (WHERE s.code IS NOT NULL AND (" + stored + ") IS DISTINCT FROM (" + recounted + "))" + inRecount)) {
      ps.setLong(1, runId);
      bindPeriods(ps, 2, t, from, to);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        missing = rs.getLong(1);
        differing = rs.getLong(2);
      }
    }
    long orphans;
    try (PreparedStatement ps = connection.prepareStatement("SELECT count(*)" + unsupported)) {
      bindPeriods(ps, 1, t, from, to);
      ps.setLong(3, runId);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        orphans = rs.getLong(1);
      }
    }
    if (!dryRun && missing + differing + orphans > 0) {
      String columns = String.join(", ", t.keys) + ", " + String.join(", ", t.values);
      String select = t.keys.stream().map(k -> "r." + k).collect(Collectors.joining(", ")) + ", " + recounted;
      String set = t.values.stream().map(v -> v + " = EXCLUDED." + v).collect(Collectors.joining(", "));
      try (PreparedStatement upsert = connection.prepareStatement("INSERT INTO " + t.table + " (" + columns + ", updated_at)"
              + " SELECT " + select + ", now()" + inRecount + " AND (s.code IS NULL OR (" + stored + ") IS DISTINCT FROM ("
              + recounted + ")) ON CONFLICT (" + String.join(", ", t.keys) + ") DO UPDATE SET " + set + ", updated_at = now()");
          PreparedStatement delete = connection.prepareStatement("DELETE" + unsupported)) {
        upsert.setLong(1, runId);
        bindPeriods(upsert, 2, t, from, to);
        upsert.executeUpdate();
        bindPeriods(delete, 1, t, from, to);
        delete.setLong(3, runId);
        delete.executeUpdate();
        connection.commit();
      } catch (SQLException e) {
        connection.rollback();
        throw e;
      }
    }
    return new Result(from, to, differing, missing, orphans);
  }

  private static void bindPeriods(PreparedStatement ps, int index, AggregateTable t, Instant from, Instant to)
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
