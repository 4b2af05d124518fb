package io.tally.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.testing.ClickOracle;
import io.tally.testing.PostgresExtension;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The read side's tables, compared with what an oracle says: minutes, hours and days exactly, each
 * day's visitor sketch by its estimate against the oracle's exact count; a breakdown exactly where
 * the oracle has no more values than a group keeps, and in a flooded group the values of least rank
 * each with all their clicks and {@code (other)} with the rest. Rows of links named {@code flush-*}
 * (clicks sent to move watermarks) are left out.
 */
final class OracleTables {

  static final String OTHER = "(other)";

  private static final String NOT_FLUSH = " WHERE code NOT LIKE 'flush-%'";
  private static final String HOUR_KEY = "code || '@' || (extract(epoch FROM hour) * 1000)::bigint";
  private static final String DAY_KEY =
      "code || '@' || (extract(epoch FROM day::timestamp AT TIME ZONE 'UTC') * 1000)::bigint";

  /** The tables as read, each keyed as the oracle keys its rows, and what the comparison saw. */
  record Compared(
      Map<String, List<Long>> minutes,
      Map<String, List<Long>> hours,
      Map<String, List<Long>> days,
      Map<String, String> sketches,
      int hourlyRows,
      int dailyRows,
      int floodedHourlyGroups,
      int floodedDailyGroups) {

    /** Rows compared in all. */
    int rows() {
      return minutes.size() + hours.size() + days.size() + sketches.size() + hourlyRows + dailyRows;
    }
  }

  private OracleTables() {}

  /** Asserts that every table holds what {@code oracle} says, a group keeping {@code maxValues}. */
  static Compared assertHold(PostgresExtension postgres, ClickOracle oracle, int maxValues) {
    Map<String, List<Long>> minutes =
        postgres.rows(
            "SELECT code || '@' || (extract(epoch FROM minute) * 1000)::bigint, clicks,"
                + " bot_clicks FROM click_counts"
                + NOT_FLUSH);
    assertThat(minutes).as("click_counts").isEqualTo(lists(oracle.minutes()));
    Map<String, List<Long>> hours =
        postgres.rows(
            "SELECT " + HOUR_KEY + ", clicks, bot_clicks, visitors FROM click_hourly" + NOT_FLUSH);
    assertThat(hours).as("click_hourly").isEqualTo(lists(oracle.hours()));
    Map<String, List<Long>> days =
        postgres.rows(
            "SELECT " + DAY_KEY + ", clicks, bot_clicks, visitors FROM click_daily" + NOT_FLUSH);
    assertThat(days).as("click_daily").isEqualTo(lists(oracle.days()));
    Map<String, String> sketches = postgres.texts(ClickOracle.STORED_DAY_SKETCHES);
    assertThat(oracle.daySketchMismatches(sketches)).as("day sketches").isEmpty();
    int[] hourly =
        compareBreakdowns(
            "click_dimensions_hourly",
            postgres.rows(
                "SELECT "
                    + HOUR_KEY
                    + " || '@' || dimension || '@' || value, clicks FROM click_dimensions_hourly"
                    + NOT_FLUSH),
            oracle.dimensions(),
            maxValues);
    int[] daily =
        compareBreakdowns(
            "click_dimensions_daily",
            postgres.rows(
                "SELECT "
                    + DAY_KEY
                    + " || '@' || dimension || '@' || value, clicks FROM click_dimensions_daily"
                    + NOT_FLUSH),
            oracle.dayDimensions(),
            maxValues);
    return new Compared(minutes, hours, days, sketches, hourly[0], daily[0], hourly[1], daily[1]);
  }

  /** Compares one breakdown table with the oracle: {rows compared, flooded groups}. */
  private static int[] compareBreakdowns(
      String table, Map<String, List<Long>> stored, Map<String, Long> expected, int maxValues) {
    Map<String, Map<String, Long>> have = new HashMap<>();
    stored.forEach((key, clicks) -> group(have, key).put(value(key), clicks.get(0)));
    Map<String, Map<String, Long>> want = new HashMap<>();
    expected.forEach((key, clicks) -> group(want, key).put(value(key), clicks));
    assertThat(have.keySet()).as(table + " groups").isEqualTo(want.keySet());
    int flooded = 0;
    for (Map.Entry<String, Map<String, Long>> group : want.entrySet()) {
      Map<String, Long> values = group.getValue();
      Map<String, Long> kept = have.get(group.getKey());
      String what = table + " " + group.getKey();
      if (values.size() <= maxValues) {
        assertThat(kept).as(what).isEqualTo(values);
        continue;
      }
      flooded++;
      Set<String> keptValues = new HashSet<>(ClickOracle.keptValues(values.keySet(), maxValues));
      keptValues.add(OTHER);
      assertThat(kept.keySet()).as(what + ": the values of least rank").isEqualTo(keptValues);
      long inKept = 0;
      for (Map.Entry<String, Long> value : kept.entrySet()) {
        if (!value.getKey().equals(OTHER)) {
          assertThat(value.getValue())
              .as(what + " " + value.getKey())
              .isEqualTo(values.get(value.getKey()));
          inKept += value.getValue();
        }
      }
      long total = values.values().stream().mapToLong(Long::longValue).sum();
      assertThat(kept.get(OTHER)).as(what + " " + OTHER).isEqualTo(total - inKept);
    }
    return new int[] {stored.size(), flooded};
  }

  /** A breakdown row's group: its code, period and dimension. */
  private static Map<String, Long> group(Map<String, Map<String, Long>> groups, String key) {
    String[] parts = key.split("@", 4);
    return groups.computeIfAbsent(parts[0] + "@" + parts[1] + "@" + parts[2], g -> new HashMap<>());
  }

  private static String value(String key) {
    return key.split("@", 4)[3];
  }

  static Map<String, List<Long>> lists(Map<String, long[]> rows) {
    Map<String, List<Long>> lists = new HashMap<>();
    rows.forEach((key, values) -> lists.put(key, Arrays.stream(values).boxed().toList()));
    return lists;
  }
}
