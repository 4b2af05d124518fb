package io.tally.bench.support;

import io.tally.local.LocalServices;
import java.sql.SQLException;

/**
 * What PostgreSQL wrote between two marks of a run: rows inserted or updated in its tables (an
 * upsert counts once, either way), the WAL bytes they made, and the CPU its processes spent. The
 * cost of the job's writes per row, for a capacity plan.
 *
 * @param rows rows inserted or updated in user tables
 * @param walBytes WAL written, from {@code pg_stat_wal}
 * @param cpuSeconds CPU seconds of the postmaster and its children
 * @param seconds wall time between the marks
 */
public record DatabaseWrites(long rows, long walBytes, double cpuSeconds, double seconds) {

  /** The counters at one instant. */
  public record Mark(long rows, long walBytes, CpuMeter.Snapshot cpu) {

    /**
     * Reads the counters. The table statistics reach {@code pg_stat_user_tables} within about a
     * second of a commit, so take the last mark a moment after the writes stop.
     */
    public static Mark take(LocalServices stack, CpuMeter cpu) throws SQLException {
      long[] row =
          Sql.firstRow(
              stack,
              "SELECT (SELECT coalesce(sum(n_tup_ins + n_tup_upd), 0) FROM pg_stat_user_tables),"
                  + " (SELECT wal_bytes FROM pg_stat_wal)");
      return new Mark(row[0], row[1], cpu.snapshot());
    }
  }

  public static DatabaseWrites between(Mark from, Mark to, CpuMeter cpu) {
    CpuMeter.Usage usage = cpu.between(from.cpu(), to.cpu());
    return new DatabaseWrites(
        to.rows() - from.rows(),
        to.walBytes() - from.walBytes(),
        usage.postgres() * usage.seconds(),
        usage.seconds());
  }

  public double walBytesPerRow() {
    return walBytes / (double) rows;
  }

  public double cpuMicrosPerRow() {
    return cpuSeconds * 1e6 / rows;
  }

  /** Rows one fully busy core of PostgreSQL would write per second at this cost. */
  public double rowsPerCoreSecond() {
    return rows / cpuSeconds;
  }
}
