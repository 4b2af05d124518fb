package io.tally.counting.sql;

import io.tally.counting.records.MinuteCount;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Timestamp;
import org.apache.flink.connector.jdbc.JdbcStatementBuilder;

/**
 * The click job's write of a minute's totals: insert the row, or raise it to the new totals.
 * Writing a replayed or re-fired window again leaves the row as it was, which is what turns
 * at-least-once delivery into exact counts.
 *
 * <p>A row is never lowered by the stream, because a minute's totals only grow while it is open. A
 * lower total means the job lost the minute's state (it was started without its checkpoint, or a
 * straggler arrived for a minute whose state was already dropped) and is counting the minute again
 * from the clicks it still sees: overwriting would replace, say, 100 clicks with 1. Lowering a row
 * is left to reconciliation, which recounts from the whole log (it binds its own statement with
 * this class).
 */
public final class ClickCountUpsert implements JdbcStatementBuilder<MinuteCount> {

  public static final String SQL =
      "INSERT INTO click_counts (code, minute, clicks, bot_clicks, updated_at) VALUES (?, ?, ?, ?,"
          + " now()) ON CONFLICT (code, minute) DO UPDATE SET clicks ="
          + " GREATEST(click_counts.clicks, EXCLUDED.clicks), bot_clicks ="
          + " GREATEST(click_counts.bot_clicks, EXCLUDED.bot_clicks), updated_at = now() WHERE"
          + " EXCLUDED.clicks > click_counts.clicks OR EXCLUDED.bot_clicks >"
          + " click_counts.bot_clicks";

  /**
   * A minute recounted whole by a run that started without state ({@link
   * io.tally.counting.periods.Recount}): its row replaces the stored one, lower or not, since the
   * earlier run may have judged some of its clicks otherwise.
   */
  public static final String REPLACING_SQL =
      "INSERT INTO click_counts (code, minute, clicks, bot_clicks, updated_at) VALUES (?, ?, ?, ?,"
          + " now()) ON CONFLICT (code, minute) DO UPDATE SET clicks = EXCLUDED.clicks, bot_clicks"
          + " = EXCLUDED.bot_clicks, updated_at = now() WHERE (click_counts.clicks,"
          + " click_counts.bot_clicks) IS DISTINCT FROM (EXCLUDED.clicks, EXCLUDED.bot_clicks)";

  @Override
  public void accept(PreparedStatement ps, MinuteCount count) throws SQLException {
    ps.setString(1, count.code());
    ps.setTimestamp(2, new Timestamp(count.minuteStart()));
    ps.setLong(3, count.clicks());
    ps.setLong(4, count.botClicks());
  }
}
