package io.tally.bench.support;

import io.tally.counting.sql.AggregateTables;
import io.tally.counting.sql.UpsertTable;
import io.tally.local.LocalServices;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/** SQL a benchmark runs around what it measures: setting data up, and counting what came out. */
public final class Sql {

  private Sql() {}

  /**
   * Runs the statements in order on one connection (so a {@code setseed} holds for the statements
   * after it); returns the rows each changed, -1 for a statement that changes none.
   */
  public static long[] execute(LocalServices stack, String... statements) throws SQLException {
    try (Connection c = stack.connect();
        Statement s = c.createStatement()) {
      long[] changed = new long[statements.length];
      for (int i = 0; i < statements.length; i++) {
        s.execute(statements[i]);
        changed[i] = s.getUpdateCount();
      }
      return changed;
    }
  }

  /** Empties the five tables the click job writes, so that a run counts from nothing. */
  public static void emptyCountTables(LocalServices stack) throws SQLException {
    AggregateTables tables = AggregateTables.READ_SIDE;
    execute(
        stack,
        "TRUNCATE "
            + Stream.of(
                    tables.minutes(),
                    tables.hours(),
                    tables.days(),
                    tables.dimensions(),
                    tables.dayDimensions())
                .map(UpsertTable::name)
                .collect(Collectors.joining(", ")));
  }

  /** The first row {@code query} returns, each column read as a number. */
  public static long[] firstRow(LocalServices stack, String query) throws SQLException {
    try (Connection c = stack.connect();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(query)) {
      rs.next();
      long[] row = new long[rs.getMetaData().getColumnCount()];
      for (int i = 0; i < row.length; i++) {
        row[i] = rs.getLong(i + 1);
      }
      return row;
    }
  }
}
