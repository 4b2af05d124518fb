package io.tally.bench.redirect;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.EnumMap;
import java.util.Map;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Watches PostgreSQL while a benchmark cell runs: samples what every busy client backend is doing
 * ({@code pg_stat_activity}'s wait events) many times a second, and reads the commit and WAL-flush
 * counters before and after. By Little's law, the average number of backends in a state divided by
 * the commit rate is the time each transaction spends in that state.
 */
final class PgSampler implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(PgSampler.class);

  /** What a busy backend is doing at a sample. */
  enum State {
    /** Running, waiting for nothing. */
    CPU,
    ROW_LOCK,
    /** Writing or flushing WAL, a commit's wait. */
    WAL_FLUSH,
    OTHER
  }

  /** What one cell saw. */
  record Stats(
      double seconds,
      long samples,
      Map<State, Double> avgBackends,
      long commits,
      long walSyncs,
      double walSyncMs) {
    double commitsPerSecond() {
      return commits / seconds;
    }

    /** Milliseconds each committed transaction spent in {@code state}, by Little's law. */
    double msPerCommit(State state) {
      return commits == 0
          ? Double.NaN
          : avgBackends.getOrDefault(state, 0.0) / commitsPerSecond() * 1000;
    }

    /** Milliseconds each committed transaction spent in PostgreSQL, in every state. */
    double msInPostgres() {
      double ms = 0;
      for (State state : State.values()) {
        ms += msPerCommit(state);
      }
      return ms;
    }

    double avgFsyncMs() {
      return walSyncs == 0 ? Double.NaN : walSyncMs / walSyncs;
    }

    double totalBusyBackends() {
      return avgBackends.values().stream().mapToDouble(Double::doubleValue).sum();
    }
  }

  private static final String ACTIVITY =
      "SELECT wait_event_type, wait_event FROM pg_stat_activity WHERE backend_type = 'client"
          + " backend' AND state <> 'idle' AND pid <> pg_backend_pid()";

  private final Connection sampling;
  private final Connection counters;
  private final long intervalMillis;
  private final Map<State, Long> seen = new EnumMap<>(State.class);
  private volatile boolean running = true;
  private long samples;
  private long startNanos;
  private long[] startCounters;
  private final Thread thread;

  PgSampler(Supplier<Connection> connections, long intervalMillis) throws SQLException {
    this.sampling = connections.get();
    this.counters = connections.get();
    this.intervalMillis = intervalMillis;
    this.startCounters = readCounters();
    this.startNanos = System.nanoTime();
    this.thread = new Thread(this::loop, "bench-pg-sampler");
    thread.setDaemon(true);
    thread.start();
  }

  private void loop() {
    try (Statement s = sampling.createStatement()) {
      while (running) {
        try (ResultSet rs = s.executeQuery(ACTIVITY)) {
          synchronized (seen) {
            while (rs.next()) {
              seen.merge(classify(rs.getString(1), rs.getString(2)), 1L, Long::sum);
            }
            samples++;
          }
        }
        Thread.sleep(intervalMillis);
      }
    } catch (SQLException e) {
      LOG.warn("pg_stat_activity sampling stopped", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  static State classify(String type, String event) {
    if (type == null) {
      return State.CPU;
    }
    if (type.equals("Lock")) {
      return State.ROW_LOCK;
    }
    if ((type.equals("IO") || type.equals("LWLock")) && event.startsWith("WAL")) {
      return State.WAL_FLUSH;
    }
    return State.OTHER;
  }

  /** xact_commit of the database, wal_sync and wal_sync_time (ms) of the server. */
  private long[] readCounters() throws SQLException {
    try (Statement s = counters.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT (SELECT xact_commit FROM pg_stat_database WHERE datname ="
                    + " current_database()), wal_sync, (wal_sync_time * 1000)::bigint FROM"
                    + " pg_stat_wal")) {
      rs.next();
      return new long[] {rs.getLong(1), rs.getLong(2), rs.getLong(3)};
    }
  }

  /** Stops sampling and returns what was seen. */
  Stats stop() throws SQLException, InterruptedException {
    running = false;
    thread.join(5_000);
    double seconds = (System.nanoTime() - startNanos) / 1e9;
    // pg_stat counters are sent by each backend at most every 500 ms (PG14); let the last ones
    // arrive.
    Thread.sleep(600);
    long[] end = readCounters();
    Map<State, Double> avg = new EnumMap<>(State.class);
    synchronized (seen) {
      for (State state : State.values()) {
        avg.put(state, samples == 0 ? 0.0 : seen.getOrDefault(state, 0L) / (double) samples);
      }
    }
    return new Stats(
        seconds,
        samples,
        avg,
        end[0] - startCounters[0],
        end[1] - startCounters[1],
        (end[2] - startCounters[2]) / 1000.0);
  }

  @Override
  public void close() {
    running = false;
    try {
      sampling.close();
      counters.close();
    } catch (SQLException e) {
      LOG.debug("closing sampler connections", e);
    }
  }
}
