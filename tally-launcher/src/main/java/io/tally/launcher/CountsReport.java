package io.tally.launcher;

import java.io.PrintStream;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;

/**
 * Prints one link's per-minute counts: a line per minute ({@code 2026-11-29T10:01Z <human> <bot>}),
 * then a total line, so a user can see the result without writing SQL.
 */
final class CountsReport {

  static final DateTimeFormatter MINUTE =
      DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm'Z'").withZone(ZoneOffset.UTC);

  private CountsReport() {}

  /** Prints the report and returns the total of human clicks. */
  static long print(Connection connection, String code, PrintStream out) throws SQLException {
    long clicks = 0;
    long bots = 0;
    try (PreparedStatement ps =
        connection.prepareStatement(
            "SELECT minute, clicks, bot_clicks FROM click_counts WHERE code = ? ORDER BY minute")) {
      ps.setString(1, code);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          long minuteClicks = rs.getLong(2);
          long minuteBots = rs.getLong(3);
          out.printf(
              "%s  %d  %d%n",
              MINUTE.format(rs.getTimestamp(1).toInstant()), minuteClicks, minuteBots);
          clicks += minuteClicks;
          bots += minuteBots;
        }
      }
    }
    out.printf("total  %d  %d%n", clicks, bots);
    return clicks;
  }
}
