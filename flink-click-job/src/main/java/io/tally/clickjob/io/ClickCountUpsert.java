package io.tally.clickjob.io;

import io.tally.clickjob.records.MinuteCount;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Timestamp;
import org.apache.flink.connector.jdbc.JdbcStatementBuilder;

/**
 * The idempotent write of a minute's totals: insert the row, or overwrite it with the same kind of
 * totals. Writing a replayed or re-fired window again leaves the row as it was, which is what turns
 * at-least-once delivery into exact counts.
 */
public final class ClickCountUpsert implements JdbcStatementBuilder<MinuteCount> {

  public static final String SQL =
      "INSERT INTO click_counts (code, minute, clicks, bot_clicks, updated_at) VALUES (?, ?, ?, ?, now())"
          + " ON CONFLICT (code, minute) DO UPDATE SET clicks = EXCLUDED.clicks, bot_clicks = EXCLUDED.bot_clicks,"
          + " updated_at = now()"
          + " WHERE click_counts.clicks IS DISTINCT FROM EXCLUDED.clicks"
          + " OR click_counts.bot_clicks IS DISTINCT FROM EXCLUDED.bot_clicks";

  @Override
  public void accept(PreparedStatement ps, MinuteCount count) throws SQLException {
    ps.setString(1, count.code());
    ps.setTimestamp(2, new Timestamp(count.minuteStart()));
    ps.setLong(3, count.clicks());
    ps.setLong(4, count.botClicks());
  }
}
