package io.tally.counting.sql;

import java.sql.SQLException;
import java.util.Set;

/**
 * Tells data that PostgreSQL refuses from a database that cannot answer, by SQLSTATE: a refused row
 * fails the same way however often it is sent, so retrying it can only stop the job, while an
 * unavailable database ({@code 08} connection, {@code 53} resources, {@code 57} operator
 * intervention, {@code 40001} serialization) answers again later.
 */
public final class SqlFailures {

  /**
   * SQLSTATE classes of refused data: data exception ({@code 22}, NUL in text among them),
   * integrity constraint violation ({@code 23}), program limit exceeded ({@code 54}, such as an
   * index entry over its size).
   */
  private static final Set<String> REFUSED_DATA_CLASSES = Set.of("22", "23", "54");

  private SqlFailures() {}

  /**
   * The exception in {@code failure}'s chain (its next exceptions, as a batch reports them, and its
   * causes) that says PostgreSQL refused the data, or null when none does.
   */
  public static SQLException refusedData(SQLException failure) {
    for (SQLException e = failure; e != null; e = e.getNextException()) {
      for (Throwable t = e; t != null; t = t.getCause()) {
        if (t instanceof SQLException sql
            && sql.getSQLState() != null
            && sql.getSQLState().length() == 5
            && REFUSED_DATA_CLASSES.contains(sql.getSQLState().substring(0, 2))) {
          return sql;
        }
        if (t.getCause() == t) {
          break;
        }
      }
    }
    return null;
  }

  /** The first line of a failure's message, with its SQLSTATE: what a dead letter says of it. */
  public static String describe(SQLException e) {
    String message = String.valueOf(e.getMessage());
    int newline = message.indexOf('\n');
    return e.getSQLState() + " " + (newline < 0 ? message : message.substring(0, newline));
  }
}
