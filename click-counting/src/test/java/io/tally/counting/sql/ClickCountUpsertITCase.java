package io.tally.counting.sql;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.counting.records.MinuteCount;
import io.tally.testing.PostgresExtension;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The click job's upsert on a real PostgreSQL: repeated writes change nothing, and rows never go
 * down.
 */
class ClickCountUpsertITCase {

  @RegisterExtension static final PostgresExtension POSTGRES = new PostgresExtension();

  private static final long MINUTE = 1_795_000_020_000L; // a minute boundary

  @BeforeEach
  void setUp() {
    POSTGRES.truncateAll();
  }

  @Test
  void writingTheSameTotalsAgainLeavesTheRowAsItWas() throws Exception {
    write(new MinuteCount("abc", MINUTE, 100, 3));
    write(new MinuteCount("abc", MINUTE, 100, 3));

    assertThat(row("abc")).containsExactly(100L, 3L);
  }

  @Test
  void aLaterFiringWithMoreClicksRaisesTheRow() throws Exception {
    write(new MinuteCount("abc", MINUTE, 100, 3));
    write(new MinuteCount("abc", MINUTE, 101, 3));
    write(new MinuteCount("abc", MINUTE, 101, 4));

    assertThat(row("abc")).containsExactly(101L, 4L);
  }

  @Test
  void aWindowRecountedWithoutItsStateDoesNotLowerTheRow() throws Exception {
    // A job started without its checkpoint re-creates the minute from one straggler.
    write(new MinuteCount("abc", MINUTE, 100, 3));
    write(new MinuteCount("abc", MINUTE, 1, 0));
    write(new MinuteCount("abc", MINUTE, 0, 5));

    assertThat(row("abc")).containsExactly(100L, 5L);
  }

  private static void write(MinuteCount count) throws Exception {
    try (Connection c = POSTGRES.connect();
        PreparedStatement ps = c.prepareStatement(ClickCountUpsert.SQL)) {
      new ClickCountUpsert().accept(ps, count);
      ps.executeUpdate();
    }
  }

  private static List<Long> row(String code) throws Exception {
    try (Connection c = POSTGRES.connect();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT clicks, bot_clicks FROM click_counts WHERE code = '" + code + "'")) {
      assertThat(rs.next()).isTrue();
      return List.of(rs.getLong(1), rs.getLong(2));
    }
  }
}
