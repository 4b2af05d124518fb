package io.tally.counting.sql;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.counting.records.DimensionCount;
import io.tally.counting.records.MinuteCount;
import io.tally.embedded.EmbeddedPostgresServer;
import io.tally.testing.PostgresExtension;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;
import net.jqwik.api.lifecycle.BeforeTry;

/**
 * {@link UpsertBatch}'s row isolation on a real PostgreSQL, over random batches in which random
 * rows are refused (NUL in text, an index entry over its limit, a failed check): every good row is
 * written once with its clicks, every refused row is reported once, a refused breakdown value's
 * clicks land on its stand-in, and the next totals of the same rows are written without a refusal
 * reported again.
 */
class UpsertBatchPropertiesITCase {

  private static final long HOUR = 1_795_996_800_000L;
  private static EmbeddedPostgresServer postgres;

  /** What becomes of one row of a generated batch. */
  enum Fate {
    GOOD_MINUTE,
    NEGATIVE_MINUTE,
    GOOD_VALUE,
    NUL_IN_VALUE,
    OVERLONG_VALUE,
    UNKNOWN_DIMENSION;

    boolean refused() {
      return this != GOOD_MINUTE && this != GOOD_VALUE;
    }

    boolean standsIn() {
      return this == NUL_IN_VALUE || this == OVERLONG_VALUE;
    }
  }

  @BeforeContainer
  static void startPostgres() {
    postgres = PostgresExtension.startOwn();
  }

  @AfterContainer
  static void stopPostgres() {
    postgres.close();
  }

  @BeforeTry
  void emptyTables() throws SQLException {
    try (Connection db = connect();
        Statement sql = db.createStatement()) {
      sql.execute("TRUNCATE click_counts, click_dimensions_hourly");
    }
  }

  @Property(tries = 60)
  void everyGoodRowIsWrittenOnceAndEveryRefusedRowReportedOnce(@ForAll("batches") List<Fate> fates)
      throws SQLException {
    UpsertBatch batch = new UpsertBatch();
    UpsertBatch.Rows<MinuteCount> minutes = batch.table(AggregateTables.READ_SIDE.minutes());
    UpsertBatch.Rows<DimensionCount> values = batch.table(AggregateTables.READ_SIDE.dimensions());
    List<Record> roundRows = new ArrayList<>();
    Map<String, Long> expectedMinutes = new HashMap<>();
    Map<String, Long> expectedValues = new HashMap<>();

    try (Connection db = connect()) {
      for (int round = 1; round <= 2; round++) {
        roundRows.clear();
        for (int i = 0; i < fates.size(); i++) {
          Fate fate = fates.get(i);
          long clicks = i + round;
          if (fate == Fate.GOOD_MINUTE || fate == Fate.NEGATIVE_MINUTE) {
            MinuteCount row =
                new MinuteCount(
                    "c" + i, HOUR + i * 60_000L, fate == Fate.GOOD_MINUTE ? clicks : -clicks, 0);
            minutes.add(row);
            roundRows.add(row);
            if (fate == Fate.GOOD_MINUTE) {
              expectedMinutes.put(row.code(), clicks);
            }
          } else {
            DimensionCount row = valueRow(fate, i, clicks);
            values.add(row);
            roundRows.add(row);
            if (fate == Fate.GOOD_VALUE) {
              expectedValues.put(row.value(), clicks);
            } else if (fate.standsIn()) {
              expectedValues.put(row.standIn().value(), clicks);
            }
          }
        }

        List<UpsertBatch.Refused> refused = batch.write(db);

        List<Record> expectedRefused = new ArrayList<>();
        if (round == 1) {
          for (int i = 0; i < fates.size(); i++) {
            if (fates.get(i).refused()) {
              expectedRefused.add(roundRows.get(i));
            }
          }
        }
        assertThat(refused)
            .extracting(UpsertBatch.Refused::row)
            .containsExactlyInAnyOrderElementsOf(expectedRefused);
        assertThat(refused)
            .allSatisfy(
                r ->
                    assertThat(r.stoodIn())
                        .isEqualTo(
                            r.row() instanceof DimensionCount d
                                && !d.dimension().equals("no such dimension")));
        assertThat(texts(db, "SELECT code, clicks FROM click_counts")).isEqualTo(expectedMinutes);
        assertThat(texts(db, "SELECT value, clicks FROM click_dimensions_hourly"))
            .isEqualTo(expectedValues);
      }
    }
  }

  private static DimensionCount valueRow(Fate fate, int i, long clicks) {
    return switch (fate) {
      case GOOD_VALUE -> new DimensionCount("abc", HOUR, "referrer", "v" + i, clicks);
      case NUL_IN_VALUE -> new DimensionCount("abc", HOUR, "referrer", "v" + i + "\0", clicks);
      case OVERLONG_VALUE -> new DimensionCount("abc", HOUR, "referrer", incompressible(i), clicks);
      default -> new DimensionCount("abc", HOUR, "no such dimension", "v" + i, clicks);
    };
  }

  /** Random letters, which PostgreSQL cannot compress below its index entry limit. */
  private static String incompressible(int seed) {
    return new Random(seed)
        .ints(3000, 'a', 'z' + 1)
        .collect(StringBuilder::new, StringBuilder::appendCodePoint, StringBuilder::append)
        .toString();
  }

  @Provide
  Arbitrary<List<Fate>> batches() {
    Arbitrary<Fate> fate =
        Arbitraries.frequencyOf(
            Tuple.of(6, Arbitraries.just(Fate.GOOD_MINUTE)),
            Tuple.of(6, Arbitraries.just(Fate.GOOD_VALUE)),
            Tuple.of(1, Arbitraries.just(Fate.NEGATIVE_MINUTE)),
            Tuple.of(1, Arbitraries.just(Fate.NUL_IN_VALUE)),
            Tuple.of(1, Arbitraries.just(Fate.OVERLONG_VALUE)),
            Tuple.of(1, Arbitraries.just(Fate.UNKNOWN_DIMENSION)));
    return fate.list().ofMinSize(1).ofMaxSize(40);
  }

  private static Connection connect() throws SQLException {
    return DriverManager.getConnection(
        postgres.jdbcUrl() + "?reWriteBatchedInserts=true", EmbeddedPostgresServer.USER, "");
  }

  private static Map<String, Long> texts(Connection db, String sql) throws SQLException {
    Map<String, Long> rows = new HashMap<>();
    try (Statement statement = db.createStatement();
        ResultSet rs = statement.executeQuery(sql)) {
      while (rs.next()) {
        rows.put(rs.getString(1), rs.getLong(2));
      }
    }
    db.commit();
    return rows;
  }
}
