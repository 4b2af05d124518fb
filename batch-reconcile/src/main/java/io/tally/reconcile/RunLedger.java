package io.tally.reconcile;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.SortedMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The ledger of reconcile runs ({@code reconcile_runs}): a run is recorded when it starts, beats
 * while it lives, and is recorded finished, refused or failed with its figures; a run whose process
 * died is found by its silence and marked abandoned. A run key names one intended run, so that a
 * run started again under it recounts the range it first resolved, or nothing once it ended.
 */
public final class RunLedger {

  /** How often a live run says so in {@code reconcile_runs.heartbeat_at}. */
  static final Duration HEARTBEAT = Duration.ofSeconds(20);

  /** A run silent this long is taken for one whose process died. */
  static final Duration ABANDONED_AFTER = Duration.ofMinutes(2);

  private final Connection connection;
  private final String jdbcUrl;
  private final String user;
  private final String password;

  /**
   * @param connection the reconciler's connection, so that a run's end is recorded in the
   *     transaction of its repair
   */
  RunLedger(Connection connection, String jdbcUrl, String user, String password) {
    this.connection = connection;
    this.jdbcUrl = jdbcUrl;
    this.user = user;
    this.password = password;
  }

  /** The last run started under a run key: its id, status and the range it resolved. */
  public record KeyedRun(long id, String status, TimeRange range, Instant heartbeat) {
    /**
     * Whether the run is over, one way or another; an abandoned run is not: its range is still to
     * do.
     */
    public boolean ended() {
      return status.equals("finished") || status.equals("refused") || status.equals("failed");
    }
  }

  /**
   * Marks every run silent for {@link #ABANDONED_AFTER} as abandoned: its process died (a kill -9,
   * a lost pod) and will not finish it. Returns their ids.
   */
  public List<Long> abandonSilentRuns() throws SQLException {
    List<Long> abandoned = new ArrayList<>();
    try (PreparedStatement ps =
        connection.prepareStatement(
            "UPDATE reconcile_runs SET status = 'abandoned', finished_at = now() WHERE status ="
                + " 'running' AND COALESCE(heartbeat_at, started_at) < now() - make_interval(secs"
                + " => ?) RETURNING id")) {
      ps.setLong(1, ABANDONED_AFTER.toSeconds());
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          abandoned.add(rs.getLong(1));
        }
      }
    }
    return abandoned;
  }

  /** The last run started under {@code key}, if any. */
  public Optional<KeyedRun> lastRunOf(String key) throws SQLException {
    try (PreparedStatement ps =
        connection.prepareStatement(
            "SELECT id, status, range_from, range_to, COALESCE(heartbeat_at, started_at) FROM"
                + " reconcile_runs WHERE run_key = ? ORDER BY id DESC LIMIT 1")) {
      ps.setString(1, key);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return Optional.empty();
        }
        return Optional.of(
            new KeyedRun(
                rs.getLong(1),
                rs.getString(2),
                new TimeRange(rs.getTimestamp(3).toInstant(), rs.getTimestamp(4).toInstant()),
                rs.getTimestamp(5).toInstant()));
      }
    }
  }

  /**
   * Beats for the run every {@link #HEARTBEAT}, on a connection of its own, until closed: while it
   * beats, no later run takes it for abandoned.
   */
  public AutoCloseable heartbeat(long runId) throws SQLException {
    Connection beats = DriverManager.getConnection(jdbcUrl, user, password);
    ScheduledExecutorService timer =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "reconcile-heartbeat-" + runId);
              t.setDaemon(true);
              return t;
            });
    timer.scheduleWithFixedDelay(
        () -> {
          try (PreparedStatement ps =
              beats.prepareStatement(
                  "UPDATE reconcile_runs SET heartbeat_at = now() WHERE id = ?")) {
            ps.setLong(1, runId);
            ps.executeUpdate();
          } catch (SQLException e) {
            // A missed beat is harmless unless every beat for two minutes is missed.
          }
        },
        0,
        HEARTBEAT.toMillis(),
        TimeUnit.MILLISECONDS);
    return () -> {
      timer.shutdownNow();
      timer.awaitTermination(5, TimeUnit.SECONDS);
      beats.close();
    };
  }

  /** Records the start of a run, under {@code runKey} if given, and returns its id. */
  public long startRun(
      TimeRange range,
      Instant closedBefore,
      boolean dryRun,
      RemovalLimit limit,
      Optional<String> runKey)
      throws SQLException {
    try (PreparedStatement ps =
        connection.prepareStatement(
            "INSERT INTO reconcile_runs (range_from, range_to, closed_before, mode,"
                + " max_removed_share, forced, run_key, heartbeat_at) VALUES (?, ?, ?, ?, ?, ?, ?,"
                + " now()) RETURNING id")) {
      ps.setTimestamp(1, Timestamp.from(range.from()));
      ps.setTimestamp(2, Timestamp.from(range.to()));
      ps.setTimestamp(3, Timestamp.from(closedBefore));
      ps.setString(4, dryRun ? "dry-run" : "repair");
      ps.setDouble(5, limit.maxShare());
      ps.setBoolean(6, limit.force());
      ps.setString(7, runKey.orElse(null));
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  /** Records how a run ended, its figures and its refusal if any, in the open transaction. */
  void finish(ReconcileReport r) throws SQLException {
    try (PreparedStatement ps =
        connection.prepareStatement(
            "UPDATE reconcile_runs SET status = ?, finished_at = now(), events_read = ?,"
                + " clicks_in_range = ?, distinct_clicks = ?, duplicates = ?, malformed = ?::jsonb,"
                + " minutes_checked = ?, minutes_differing = ?, minutes_left_open = ?, clicks_added"
                + " = ?, clicks_removed = ?, aggregates = ?::jsonb, refused_reason = ?, coverage ="
                + " ?::jsonb, minutes_not_covered = ?, stored_clicks_checked = ? WHERE id = ?")) {
      int i = 1;
      ps.setString(i++, r.refused() ? "refused" : "finished");
      ps.setLong(i++, r.eventsRead());
      ps.setLong(i++, r.clicksInRange());
      ps.setLong(i++, r.distinctClicks());
      ps.setLong(i++, r.duplicates());
      ps.setString(i++, json(r.malformed()));
      ps.setLong(i++, r.minutesChecked());
      ps.setLong(i++, r.minutesDiffering());
      ps.setLong(i++, r.minutesLeftOpen());
      ps.setLong(i++, r.clicksAdded());
      ps.setLong(i++, r.clicksRemoved());
      ps.setString(i++, r.aggregatesJson());
      ps.setString(i++, r.refusal().orElse(null));
      ps.setString(i++, r.coverage().json(r.range()));
      ps.setLong(i++, r.minutesNotCovered());
      ps.setLong(i++, r.storedClicksChecked());
      ps.setLong(i, r.runId());
      ps.executeUpdate();
    }
  }

  /** Marks a run failed, in the open transaction if there is one. */
  void fail(long runId) throws SQLException {
    try (PreparedStatement ps =
        connection.prepareStatement(
            "UPDATE reconcile_runs SET status = 'failed', finished_at = now() WHERE id = ?")) {
      ps.setLong(1, runId);
      ps.executeUpdate();
    }
  }

  private static String json(SortedMap<String, Long> malformed) {
    StringBuilder s = new StringBuilder("{");
    malformed.forEach(
        (reason, count) -> {
          if (s.length() > 1) {
            s.append(',');
          }
          s.append('"').append(reason).append("\":").append(count);
        });
    return s.append('}').toString();
  }
}
