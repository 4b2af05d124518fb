package io.tally.counting.sql;

import io.tally.counting.periods.LinkPeriods;
import io.tally.counting.records.DimensionCount;
import io.tally.counting.records.KeptValues;
import io.tally.counting.records.LedgerRow;
import io.tally.counting.records.PeriodTotals;
import io.tally.counting.records.StreamProgress;
import java.sql.Date;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.LocalDate;
import org.apache.flink.connector.jdbc.JdbcStatementBuilder;

/**
 * The click job's writes of the read side's aggregates: hour totals, day totals, hourly and daily
 * dimension counts, the links' ledgers and its event-time progress. Like {@link ClickCountUpsert},
 * each inserts the row or raises it to the new totals and never lowers it, so replays and
 * re-firings are harmless and a job that lost its state cannot replace a large total with a small
 * one. Only reconciliation, and the job for the periods it recounts whole after starting without
 * state, lower rows.
 */
public final class AggregateUpserts {

  private AggregateUpserts() {}

  public static final String HOURS_SQL =
      "INSERT INTO click_hourly (code, hour, clicks, bot_clicks, visitors, updated_at) VALUES (?,"
          + " ?, ?, ?, ?, now()) ON CONFLICT (code, hour) DO UPDATE SET clicks ="
          + " GREATEST(click_hourly.clicks, EXCLUDED.clicks), bot_clicks ="
          + " GREATEST(click_hourly.bot_clicks, EXCLUDED.bot_clicks), visitors ="
          + " GREATEST(click_hourly.visitors, EXCLUDED.visitors), updated_at = now() WHERE"
          + " EXCLUDED.clicks > click_hourly.clicks OR EXCLUDED.bot_clicks >"
          + " click_hourly.bot_clicks OR EXCLUDED.visitors > click_hourly.visitors";

  /**
   * A day's row: like an hour's, and its visitor sketch goes with its visitors. A sketch is the
   * union of the same visitors the count counts, or null when some of them brought no key, so it is
   * replaced whenever the count is not lowered, and a day stored before sketches existed takes its
   * first one.
   */
  public static final String DAYS_SQL =
      "INSERT INTO click_daily (code, day, clicks, bot_clicks, visitors, visitor_sketch,"
          + " updated_at) VALUES (?, ?, ?, ?, ?, ?, now()) ON CONFLICT (code, day) DO UPDATE SET"
          + " clicks = GREATEST(click_daily.clicks, EXCLUDED.clicks), bot_clicks ="
          + " GREATEST(click_daily.bot_clicks, EXCLUDED.bot_clicks), visitors ="
          + " GREATEST(click_daily.visitors, EXCLUDED.visitors), visitor_sketch = CASE WHEN"
          + " EXCLUDED.visitors >= click_daily.visitors THEN EXCLUDED.visitor_sketch ELSE"
          + " click_daily.visitor_sketch END, updated_at = now() WHERE EXCLUDED.clicks >"
          + " click_daily.clicks OR EXCLUDED.bot_clicks > click_daily.bot_clicks OR"
          + " EXCLUDED.visitors > click_daily.visitors OR (EXCLUDED.visitors >="
          + " click_daily.visitors AND EXCLUDED.visitor_sketch IS DISTINCT FROM"
          + " click_daily.visitor_sketch)";

  /**
   * A day's row that leaves its stored sketch as it is ({@link PeriodTotals#sketchKept}): no new
   * visitor came since the sketch was sent, and a sketch is the largest value of the row.
   */
  public static final String DAY_TOTALS_SQL =
      "INSERT INTO click_daily (code, day, clicks, bot_clicks, visitors, updated_at) VALUES (?, ?,"
          + " ?, ?, ?, now()) ON CONFLICT (code, day) DO UPDATE SET clicks ="
          + " GREATEST(click_daily.clicks, EXCLUDED.clicks), bot_clicks ="
          + " GREATEST(click_daily.bot_clicks, EXCLUDED.bot_clicks), visitors ="
          + " GREATEST(click_daily.visitors, EXCLUDED.visitors), updated_at = now() WHERE"
          + " EXCLUDED.clicks > click_daily.clicks OR EXCLUDED.bot_clicks > click_daily.bot_clicks"
          + " OR EXCLUDED.visitors > click_daily.visitors";

  /**
   * An hour recounted whole by a run that started without state ({@link
   * io.tally.counting.periods.Recount}): its row replaces the stored one, lower or not.
   */
  public static final String REPLACING_HOURS_SQL =
      "INSERT INTO click_hourly (code, hour, clicks, bot_clicks, visitors, updated_at) VALUES (?,"
          + " ?, ?, ?, ?, now()) ON CONFLICT (code, hour) DO UPDATE SET clicks = EXCLUDED.clicks,"
          + " bot_clicks = EXCLUDED.bot_clicks, visitors = EXCLUDED.visitors, updated_at = now()"
          + " WHERE (click_hourly.clicks, click_hourly.bot_clicks, click_hourly.visitors) IS"
          + " DISTINCT FROM (EXCLUDED.clicks, EXCLUDED.bot_clicks, EXCLUDED.visitors)";

  /** A day recounted whole, as {@link #REPLACING_HOURS_SQL}, its visitor sketch and all. */
  public static final String REPLACING_DAYS_SQL =
      "INSERT INTO click_daily (code, day, clicks, bot_clicks, visitors, visitor_sketch,"
          + " updated_at) VALUES (?, ?, ?, ?, ?, ?, now()) ON CONFLICT (code, day) DO UPDATE SET"
          + " clicks = EXCLUDED.clicks, bot_clicks = EXCLUDED.bot_clicks, visitors ="
          + " EXCLUDED.visitors, visitor_sketch = EXCLUDED.visitor_sketch, updated_at = now() WHERE"
          + " (click_daily.clicks, click_daily.bot_clicks, click_daily.visitors,"
          + " click_daily.visitor_sketch) IS DISTINCT FROM (EXCLUDED.clicks, EXCLUDED.bot_clicks,"
          + " EXCLUDED.visitors, EXCLUDED.visitor_sketch)";

  public static final String DIMENSIONS_SQL =
      "INSERT INTO click_dimensions_hourly (code, hour, dimension, value, clicks, updated_at)"
          + " VALUES (?, ?, ?, ?, ?, now()) ON CONFLICT (code, dimension, hour, value) DO UPDATE"
          + " SET clicks = EXCLUDED.clicks, updated_at = now() WHERE EXCLUDED.clicks >"
          + " click_dimensions_hourly.clicks";

  public static final String DAY_DIMENSIONS_SQL =
      "INSERT INTO click_dimensions_daily (code, day, dimension, value, clicks, updated_at) VALUES"
          + " (?, ?, ?, ?, ?, now()) ON CONFLICT (code, dimension, day, value) DO UPDATE SET clicks"
          + " = EXCLUDED.clicks, updated_at = now() WHERE EXCLUDED.clicks >"
          + " click_dimensions_daily.clicks";

  /**
   * Clears an hourly breakdown of every row but its kept values and their stand-ins ({@link
   * KeptValues}); the rows written after it in the same transaction put {@code (other)} back.
   */
  public static final String HOUR_KEPT_SQL =
      "DELETE FROM click_dimensions_hourly WHERE code = ? AND hour = ? AND dimension = ? AND value"
          + " <> ALL (?)";

  public static final String DAY_KEPT_SQL =
      "DELETE FROM click_dimensions_daily WHERE code = ? AND day = ? AND dimension = ? AND value"
          + " <> ALL (?)";

  /**
   * The streaming job's name, under which its {@code stream_progress} row says how far its minutes
   * are final; reconciliation reads that row to leave the open minutes alone.
   */
  public static final String STREAMING_JOB = "tally-click-count";

  /**
   * The job's progress ({@link StreamProgress}): raised within a run, and replaced by a newer run's
   * whether lower or not, since a run that started without state recounts from an earlier point.
   */
  /** A link's ledger for one hour: what the job set aside, by why (the audit ledger's figures). */
  public static final String LEDGER_SQL =
      "INSERT INTO link_ledger_hourly (code, hour, duplicates, late, refused_rows, updated_at)"
          + " VALUES (?, ?, ?, ?, ?, now()) ON CONFLICT (code, hour) DO UPDATE SET duplicates ="
          + " GREATEST(link_ledger_hourly.duplicates, EXCLUDED.duplicates), late ="
          + " GREATEST(link_ledger_hourly.late, EXCLUDED.late), refused_rows ="
          + " GREATEST(link_ledger_hourly.refused_rows, EXCLUDED.refused_rows), updated_at = now()"
          + " WHERE EXCLUDED.duplicates > link_ledger_hourly.duplicates OR EXCLUDED.late >"
          + " link_ledger_hourly.late OR EXCLUDED.refused_rows > link_ledger_hourly.refused_rows";

  public static final JdbcStatementBuilder<LedgerRow> LEDGER =
      (ps, row) -> {
        ps.setString(1, row.code());
        ps.setTimestamp(2, new Timestamp(row.hourStart()));
        ps.setLong(3, row.duplicates());
        ps.setLong(4, row.late());
        ps.setLong(5, row.refusedRows());
      };

  public static final String PROGRESS_SQL =
      "INSERT INTO stream_progress (job, closed_before, run_started_at, allowed_lateness_ms,"
          + " updated_at) VALUES (?, ?, ?, ?, now()) ON CONFLICT (job) DO UPDATE SET closed_before"
          + " = EXCLUDED.closed_before, run_started_at = EXCLUDED.run_started_at,"
          + " allowed_lateness_ms = EXCLUDED.allowed_lateness_ms, updated_at = now() WHERE"
          + " EXCLUDED.run_started_at > stream_progress.run_started_at OR (EXCLUDED.run_started_at"
          + " = stream_progress.run_started_at AND EXCLUDED.closed_before >"
          + " stream_progress.closed_before)";

  public static final JdbcStatementBuilder<PeriodTotals> HOURS =
      (ps, t) -> {
        ps.setString(1, t.code());
        ps.setTimestamp(2, new Timestamp(t.periodStart()));
        ps.setLong(3, t.clicks());
        ps.setLong(4, t.botClicks());
        ps.setLong(5, t.visitors());
      };

  public static final JdbcStatementBuilder<PeriodTotals> DAY_TOTALS =
      (ps, t) -> {
        ps.setString(1, t.code());
        ps.setDate(2, day(t.periodStart()));
        ps.setLong(3, t.clicks());
        ps.setLong(4, t.botClicks());
        ps.setLong(5, t.visitors());
      };

  public static final JdbcStatementBuilder<PeriodTotals> DAYS =
      (ps, t) -> {
        DAY_TOTALS.accept(ps, t);
        ps.setBytes(6, t.visitorSketch());
      };

  public static final JdbcStatementBuilder<DimensionCount> DIMENSIONS =
      (ps, d) -> {
        ps.setString(1, d.code());
        ps.setTimestamp(2, new Timestamp(d.periodStart()));
        ps.setString(3, d.dimension());
        ps.setString(4, d.value());
        ps.setLong(5, d.clicks());
      };

  public static final JdbcStatementBuilder<DimensionCount> DAY_DIMENSIONS =
      (ps, d) -> {
        ps.setString(1, d.code());
        ps.setDate(2, day(d.periodStart()));
        ps.setString(3, d.dimension());
        ps.setString(4, d.value());
        ps.setLong(5, d.clicks());
      };

  public static final JdbcStatementBuilder<KeptValues> HOUR_KEPT =
      (ps, k) -> {
        ps.setString(1, k.code());
        ps.setTimestamp(2, new Timestamp(k.periodStart()));
        ps.setString(3, k.dimension());
        ps.setArray(4, ps.getConnection().createArrayOf("text", keptRows(k)));
      };

  public static final JdbcStatementBuilder<KeptValues> DAY_KEPT =
      (ps, k) -> {
        ps.setString(1, k.code());
        ps.setDate(2, day(k.periodStart()));
        ps.setString(3, k.dimension());
        ps.setArray(4, ps.getConnection().createArrayOf("text", keptRows(k)));
      };

  /** The values of the rows a breakdown keeps: each kept value and the row standing in for it. */
  private static String[] keptRows(KeptValues kept) {
    String[] rows = new String[kept.values().length * 2];
    for (int i = 0; i < kept.values().length; i++) {
      DimensionCount count =
          new DimensionCount(
              kept.code(), kept.periodStart(), kept.dimension(), kept.values()[i], 0);
      rows[2 * i] = count.value();
      rows[2 * i + 1] = count.standIn().value();
    }
    return rows;
  }

  /** The UTC day starting at {@code dayStart}, as a DATE column takes it. */
  public static Date day(long dayStart) {
    return Date.valueOf(LocalDate.ofEpochDay(Math.floorDiv(dayStart, LinkPeriods.DAY)));
  }

  /**
   * Binds a progress row; {@code job} names the job in {@code stream_progress}, and {@code
   * allowedLateness} is how long after a period's end a late click still changes it.
   */
  public static JdbcStatementBuilder<StreamProgress> progress(
      String job, Duration allowedLateness) {
    long latenessMillis = allowedLateness.toMillis();
    return (ps, progress) -> {
      ps.setString(1, job);
      ps.setTimestamp(2, new Timestamp(progress.closedBefore()));
      ps.setTimestamp(3, new Timestamp(progress.runStartedAt()));
      ps.setLong(4, latenessMillis);
    };
  }
}
