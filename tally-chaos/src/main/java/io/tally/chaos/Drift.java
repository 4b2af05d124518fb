package io.tally.chaos;

import io.tally.counting.CountingOptions;
import io.tally.testing.ClickOracle;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * How far the stored counts are from the truth: per table, the sum over every key of |stored −
 * true| over its count columns. A row the job should not have written counts in full, a missing row
 * in full. The days' visitor sketches count one for every day whose stored sketch is missing, not
 * due, or estimates other than the truth's exact count ({@link ClickOracle#daySketchMismatches}). A
 * breakdown with more values than the job keeps is compared as the job writes it ({@link
 * ClickOracle#dimensions(int)}). Codes starting with {@value #FLUSH_PREFIX} are the scenario's own
 * watermark pushes and are left out.
 */
public final class Drift {

  /** Codes of the clicks stamped "now" that push every partition's watermark past the data. */
  public static final String FLUSH_PREFIX = "flush-";

  /** The values a breakdown keeps in the job every scenario runs: its default. */
  private static final int KEPT_VALUES = new CountingOptions().maxDimensionValues();

  private static final String NOT_FLUSH = " WHERE code NOT LIKE '" + FLUSH_PREFIX + "%'";

  private Drift() {}

  /** Table name → drift; 0 everywhere means the tables equal the truth exactly. */
  public static Map<String, Long> measure(Connection db, ClickOracle truth) throws SQLException {
    String minute = "(extract(epoch FROM minute) * 1000)::bigint";
    String hour = "(extract(epoch FROM hour) * 1000)::bigint";
    String day = "(extract(epoch FROM day::timestamp AT TIME ZONE 'UTC') * 1000)::bigint";
    String dimension = " || '@' || dimension || '@' || value";
    Map<String, Long> drift = new LinkedHashMap<>();
    drift.put(
        "click_counts",
        compare(read(db, "click_counts", minute, "clicks, bot_clicks"), truth.minutes()));
    drift.put(
        "click_hourly",
        compare(read(db, "click_hourly", hour, "clicks, bot_clicks, visitors"), truth.hours()));
    drift.put(
        "click_daily",
        compare(read(db, "click_daily", day, "clicks, bot_clicks, visitors"), truth.days()));
    drift.put(
        "click_daily.visitor_sketch", (long) truth.daySketchMismatches(daySketches(db)).size());
    drift.put(
        "click_dimensions_hourly",
        compare(
            read(db, "click_dimensions_hourly", hour + dimension, "clicks"),
            columns(truth.dimensions(KEPT_VALUES))));
    drift.put(
        "click_dimensions_daily",
        compare(
            read(db, "click_dimensions_daily", day + dimension, "clicks"),
            columns(truth.dayDimensions(KEPT_VALUES))));
    return drift;
  }

  private static Map<String, long[]> columns(Map<String, Long> counts) {
    Map<String, long[]> rows = new HashMap<>();
    counts.forEach((key, count) -> rows.put(key, new long[] {count}));
    return rows;
  }

  private static Map<String, String> daySketches(Connection db) throws SQLException {
    Map<String, String> sketches = new HashMap<>();
    try (Statement s = db.createStatement();
        ResultSet rs =
            s.executeQuery(
                ClickOracle.STORED_DAY_SKETCHES + " AND code NOT LIKE '" + FLUSH_PREFIX + "%'")) {
      while (rs.next()) {
        sketches.put(rs.getString(1), rs.getString(2));
      }
    }
    return sketches;
  }

  /** The sum of every table's drift. */
  public static long total(Map<String, Long> drift) {
    return drift.values().stream().mapToLong(Long::longValue).sum();
  }

  static long compare(Map<String, long[]> stored, Map<String, long[]> expected) {
    Set<String> keys = new HashSet<>(stored.keySet());
    keys.addAll(expected.keySet());
    long drift = 0;
    for (String key : keys) {
      long[] s = stored.get(key);
      long[] e = expected.get(key);
      int columns = s != null ? s.length : e.length;
      for (int i = 0; i < columns; i++) {
        drift += Math.abs((s == null ? 0 : s[i]) - (e == null ? 0 : e[i]));
      }
    }
    return drift;
  }

  /**
   * The rows of {@code table} but the watermark pushes', keyed by code and {@code key} as the truth
   * keys them, with these count columns.
   */
  private static Map<String, long[]> read(Connection db, String table, String key, String counts)
      throws SQLException {
    Map<String, long[]> rows = new HashMap<>();
    String sql = "SELECT code || '@' || " + key + ", " + counts + " FROM " + table + NOT_FLUSH;
    try (Statement s = db.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      int columns = rs.getMetaData().getColumnCount() - 1;
      while (rs.next()) {
        long[] values = new long[columns];
        for (int i = 0; i < columns; i++) {
          values[i] = rs.getLong(i + 2);
        }
        rows.put(rs.getString(1), values);
      }
    }
    return rows;
  }
}
