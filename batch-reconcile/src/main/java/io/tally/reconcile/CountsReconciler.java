package io.tally.reconcile;

import io.tally.counting.periods.LinkPeriods;
import io.tally.counting.records.MinuteCount;
import io.tally.counting.sql.AggregateUpserts;
import io.tally.counting.sql.ClickCountUpsert;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;

/**
 * The PostgreSQL side of a reconcile run: compares the recount with {@code click_counts} minute by
 * minute, and repairs the closed minutes the log covers that differ, one transaction per batch. The
 * runs themselves are kept by its {@link RunLedger}, on the same connection.
 *
 * <p>A repair writes whole recounted totals, lower or higher than the row, or deletes a row the raw
 * log does not support, so running it twice leaves the same table and the second run finds nothing.
 */
public final class CountsReconciler implements AutoCloseable {

  /**
   * Sets a row to the recount. Unlike the streaming job's {@link ClickCountUpsert#SQL}, it may
   * lower it.
   */
  static final String REPAIR_SQL =
      "INSERT INTO click_counts (code, minute, clicks, bot_clicks, updated_at) VALUES (?, ?, ?, ?,"
          + " now()) ON CONFLICT (code, minute) DO UPDATE SET clicks = EXCLUDED.clicks, bot_clicks"
          + " = EXCLUDED.bot_clicks, updated_at = now()";

  private final Connection connection;
  private final RunLedger runs;

  public CountsReconciler(String jdbcUrl, String user, String password) throws SQLException {
    this.connection = DriverManager.getConnection(jdbcUrl, user, password);
    this.runs = new RunLedger(connection, jdbcUrl, user, password);
  }

  /** The ledger of runs, on this reconciler's connection. */
  public RunLedger runs() {
    return runs;
  }

  /**
   * Where the streaming job's event time has got ({@code stream_progress}), if it has written any.
   */
  public Optional<Instant> streamProgress() throws SQLException {
    try (PreparedStatement ps =
        connection.prepareStatement("SELECT closed_before FROM stream_progress WHERE job = ?")) {
      ps.setString(1, AggregateUpserts.STREAMING_JOB);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? Optional.of(rs.getTimestamp(1).toInstant()) : Optional.empty();
      }
    }
  }

  /** The read-side figures of a run, from the Flink job's accumulators. */
  public record Recount(
      long eventsRead,
      long clicksInRange,
      long distinctClicks,
      SortedMap<String, Long> malformed,
      Duration timestampDisorder,
      List<String> refusedRows) {
    /** The figures of a run that read nothing. */
    public static final Recount NOTHING =
        new Recount(0, 0, 0, Collections.emptySortedMap(), Duration.ZERO, List.of());
  }

  /**
   * Compares, and repairs unless a dry run or refused; finishes the run row and returns the report.
   * Only closed minutes the log covers ({@code coverage}) are judged; the others are counted as
   * left open or not covered and left untouched. Everything is compared before anything is changed,
   * so a repair that would remove more than {@code limit} allows is refused whole.
   */
  public ReconcileReport reconcile(
      long runId,
      TimeRange range,
      Instant closedBefore,
      boolean dryRun,
      RemovalLimit limit,
      LogCoverage coverage,
      Recount recount,
      int batchSize)
      throws SQLException {
    Instant coveredFrom = coverage.coveredFrom(range);
    MinuteDrift minutes = compareMinutes(runId, range, closedBefore, coveredFrom);
    AggregatesReconciler aggregatesReconciler = new AggregatesReconciler(connection, coveredFrom);
    Map<AggregateTable, AggregatesReconciler.Result> aggregates =
        aggregatesReconciler.compare(runId, range, closedBefore);

    Optional<String> refusal =
        limit.refusal("click_counts", minutes.removed(), minutes.storedChecked());
    for (Map.Entry<AggregateTable, AggregatesReconciler.Result> e : aggregates.entrySet()) {
      if (refusal.isEmpty()) {
        refusal =
            limit.refusal(
                e.getKey().table(), e.getValue().clicksRemoved(), e.getValue().storedClicks());
      }
    }
    boolean repair = !dryRun && refusal.isEmpty();
    List<Drift> drifts = minutes.drifts();
    for (int i = 0; i < drifts.size(); i += batchSize) {
      repairBatch(runId, drifts.subList(i, Math.min(drifts.size(), i + batchSize)), repair);
    }
    if (repair) {
      aggregatesReconciler.repair(runId, aggregates);
    }

    // A dry run is refused like the repair it previews, with the same figures.
    ReconcileReport report =
        new ReconcileReport(
            runId,
            range,
            closedBefore,
            dryRun,
            coverage,
            refusal,
            recount.eventsRead(),
            recount.clicksInRange(),
            recount.distinctClicks(),
            recount.malformed(),
            recount.refusedRows(),
            minutes.checked(),
            minutes.leftOpen(),
            minutes.notCovered(),
            minutes.byKind(),
            minutes.added(),
            minutes.removed(),
            minutes.storedChecked(),
            aggregates);
    finishRun(report);
    return report;
  }

  /**
   * Compares the recount's minutes with {@code click_counts} in one read, in a transaction of its
   * own: the closed minutes the log covers that differ, and how many minutes were judged or passed
   * over.
   */
  private MinuteDrift compareMinutes(
      long runId, TimeRange range, Instant closedBefore, Instant coveredFrom) throws SQLException {
    List<Drift> drifts = new ArrayList<>();
    long checked = 0;
    long leftOpen = 0;
    long notCovered = 0;
    long storedChecked = 0;
    String compare =
        "SELECT COALESCE(r.code, s.code), COALESCE(r.minute, s.minute), s.clicks, s.bot_clicks,"
            + " r.clicks, r.bot_clicks FROM (SELECT code, minute, clicks, bot_clicks FROM"
            + " reconcile_recount WHERE run_id = ?) r FULL OUTER JOIN (SELECT code, minute, clicks,"
            + " bot_clicks FROM click_counts WHERE minute >= ? AND minute < ?) s ON r.code = s.code"
            + " AND r.minute = s.minute";
    connection.setAutoCommit(false);
    try (PreparedStatement ps = connection.prepareStatement(compare)) {
      ps.setFetchSize(10_000);
      ps.setLong(1, runId);
      ps.setTimestamp(2, Timestamp.from(range.from()));
      ps.setTimestamp(3, Timestamp.from(range.to()));
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          String code = rs.getString(1);
          Timestamp minute = rs.getTimestamp(2);
          if (minute.toInstant().isBefore(coveredFrom)) {
            notCovered++;
            continue;
          }
          if (minute.getTime() + LinkPeriods.MINUTE > closedBefore.toEpochMilli()) {
            leftOpen++;
            continue;
          }
          checked++;
          Long storedClicks = nullable(rs, 3);
          Long storedBots = nullable(rs, 4);
          Long recountClicks = nullable(rs, 5);
          Long recountBots = nullable(rs, 6);
          storedChecked += orZero(storedClicks) + orZero(storedBots);
          if (storedClicks != null
              && recountClicks != null
              && storedClicks.equals(recountClicks)
              && storedBots.equals(recountBots)) {
            continue;
          }
          drifts.add(new Drift(code, minute, storedClicks, storedBots, recountClicks, recountBots));
        }
      }
    }
    connection.commit();
    return new MinuteDrift(drifts, checked, leftOpen, notCovered, storedChecked);
  }

  /**
   * Ends a run that must not repair anything whatever it would find (the topic is missing, or
   * nothing was read from it): a recount of nothing would delete every row in the range.
   */
  public ReconcileReport refuse(
      long runId,
      TimeRange range,
      Instant closedBefore,
      boolean dryRun,
      LogCoverage coverage,
      String reason,
      Recount recount)
      throws SQLException {
    connection.setAutoCommit(false);
    ReconcileReport report =
        new ReconcileReport(
            runId,
            range,
            closedBefore,
            dryRun,
            coverage,
            Optional.of(reason),
            recount.eventsRead(),
            recount.clicksInRange(),
            recount.distinctClicks(),
            recount.malformed(),
            recount.refusedRows(),
            0,
            0,
            0,
            Map.of(),
            0,
            0,
            0,
            Map.of());
    finishRun(report);
    return report;
  }

  private void repairBatch(long runId, List<Drift> batch, boolean repair) throws SQLException {
    try (PreparedStatement upsert = connection.prepareStatement(REPAIR_SQL);
        PreparedStatement delete =
            connection.prepareStatement("DELETE FROM click_counts WHERE code = ? AND minute = ?");
        PreparedStatement detail =
            connection.prepareStatement(
                "INSERT INTO reconcile_drift (run_id, code, minute, kind, stored_clicks,"
                    + " stored_bot_clicks, recounted_clicks, recounted_bot_clicks, repaired) VALUES"
                    + " (?, ?, ?, ?, ?, ?, ?, ?, ?)")) {
      ClickCountUpsert rows = new ClickCountUpsert();
      for (Drift d : batch) {
        if (repair) {
          if (d.recountClicks == null) {
            delete.setString(1, d.code);
            delete.setTimestamp(2, d.minute);
            delete.addBatch();
          } else {
            rows.accept(
                upsert,
                new MinuteCount(d.code, d.minute.getTime(), d.recountClicks, d.recountBots));
            upsert.addBatch();
          }
        }
        detail.setLong(1, runId);
        detail.setString(2, d.code);
        detail.setTimestamp(3, d.minute);
        detail.setString(4, d.kind().label());
        detail.setObject(5, d.storedClicks);
        detail.setObject(6, d.storedBots);
        detail.setObject(7, d.recountClicks);
        detail.setObject(8, d.recountBots);
        detail.setBoolean(9, repair);
        detail.addBatch();
      }
      upsert.executeBatch();
      delete.executeBatch();
      detail.executeBatch();
      connection.commit();
    } catch (SQLException e) {
      connection.rollback();
      throw e;
    }
  }

  /** Empties the run's staging tables: the recount is scratch space. */
  private void dropRecount(long runId) throws SQLException {
    for (String staging : STAGING) {
      try (PreparedStatement cleanup =
          connection.prepareStatement("DELETE FROM " + staging + " WHERE run_id = ?")) {
        cleanup.setLong(1, runId);
        cleanup.executeUpdate();
      }
    }
  }

  private static final List<String> STAGING =
      List.of(
          "reconcile_recount",
          "reconcile_recount_hourly",
          "reconcile_recount_daily",
          "reconcile_recount_dimensions",
          "reconcile_recount_dimensions_daily");

  private static Long nullable(ResultSet rs, int column) throws SQLException {
    long value = rs.getLong(column);
    return rs.wasNull() ? null : value;
  }

  private static long orZero(Long value) {
    return value == null ? 0 : value;
  }

  /** Records how the run ended and empties its staging tables, in the transaction open now. */
  private void finishRun(ReconcileReport r) throws SQLException {
    runs.finish(r);
    dropRecount(r.runId());
    connection.commit();
  }

  /** Marks a run that did not finish, so its row does not read as still running. */
  public void failRun(long runId) {
    try {
      if (!connection.getAutoCommit()) {
        connection.rollback();
      }
      runs.fail(runId);
      dropRecount(runId);
      if (!connection.getAutoCommit()) {
        connection.commit();
      }
    } catch (SQLException ignored) {
      // The original failure is what matters; this row stays 'running'.
    }
  }

  @Override
  public void close() throws SQLException {
    connection.close();
  }

  private record Drift(
      String code,
      Timestamp minute,
      Long storedClicks,
      Long storedBots,
      Long recountClicks,
      Long recountBots) {
    DriftKind kind() {
      return DriftKind.of(storedClicks, storedBots, recountClicks, recountBots);
    }

    long humansAdded() {
      return orZero(recountClicks) - orZero(storedClicks);
    }

    long botsAdded() {
      return orZero(recountBots) - orZero(storedBots);
    }
  }

  /**
   * The minutes of {@code click_counts} a run judged and how they differ from the recount.
   *
   * @param drifts the closed, covered minutes that differ
   * @param checked closed minutes the log covers
   * @param leftOpen minutes not yet closed by the stream, left alone
   * @param notCovered minutes before the log's coverage, left alone
   * @param storedChecked the stored clicks of the minutes checked
   */
  private record MinuteDrift(
      List<Drift> drifts, long checked, long leftOpen, long notCovered, long storedChecked) {

    Map<DriftKind, Long> byKind() {
      Map<DriftKind, Long> byKind = new EnumMap<>(DriftKind.class);
      drifts.forEach(d -> byKind.merge(d.kind(), 1L, Long::sum));
      return byKind;
    }

    /** Clicks the repair adds. */
    long added() {
      return drifts.stream()
          .mapToLong(d -> Math.max(d.humansAdded(), 0) + Math.max(d.botsAdded(), 0))
          .sum();
    }

    /** Clicks the repair removes. */
    long removed() {
      return drifts.stream()
          .mapToLong(d -> Math.max(-d.humansAdded(), 0) + Math.max(-d.botsAdded(), 0))
          .sum();
    }
  }
}
