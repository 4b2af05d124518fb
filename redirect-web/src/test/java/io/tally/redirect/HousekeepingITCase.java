package io.tally.redirect;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.testing.PostgresExtension;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Clock;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * Tests for {@link VisitorSalts} and {@link Retention} on a real PostgreSQL, with a clock the test
 * sets.
 */
class HousekeepingITCase {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  private static final Instant NOON = Instant.parse("2026-11-30T12:00:00Z");
  private static final LocalDate TODAY = LocalDate.of(2026, 11, 30);

  private PGSimpleDataSource dataSource;

  @BeforeEach
  void setUp() {
    PG.truncateAll();
    dataSource = new PGSimpleDataSource();
    dataSource.setUrl(PG.jdbcUrl());
    dataSource.setUser(PG.user());
    dataSource.setPassword(PG.password());
  }

  @Test
  void todaysAndTomorrowsSaltsAreMadeOnceAndSharedByEveryInstance() throws Exception {
    VisitorSalts first = new VisitorSalts(dataSource, clock(NOON));
    VisitorSalts second = new VisitorSalts(dataSource, clock(NOON));

    first.refresh();
    second.refresh();

    assertThat(days()).containsExactly(TODAY, TODAY.plusDays(1));
    assertThat(first.saltOf(TODAY)).hasSize(32).isEqualTo(second.saltOf(TODAY));
    assertThat(first.saltOf(TODAY.plusDays(1)))
        .isEqualTo(second.saltOf(TODAY.plusDays(1)))
        .isNotEqualTo(first.saltOf(TODAY));
    assertThat(first.saltOf(TODAY.plusDays(2))).isNull();
  }

  @Test
  void aSaltIsDeletedEverywhere48HoursAfterItsDayBegan() throws Exception {
    VisitorSalts salts = new VisitorSalts(dataSource, clock(NOON));
    salts.refresh();

    new VisitorSalts(dataSource, clock(NOON.plusSeconds(86_400))).refresh();
    assertThat(days()).as("a day later, yesterday's salt is kept").contains(TODAY);

    VisitorSalts later =
        new VisitorSalts(
            dataSource, clock(TODAY.plusDays(2).atStartOfDay(ZoneOffset.UTC).toInstant()));
    later.refresh();
    assertThat(days())
        .doesNotContain(TODAY)
        .contains(TODAY.plusDays(1), TODAY.plusDays(2), TODAY.plusDays(3));
    assertThat(later.saltOf(TODAY)).isNull();
  }

  @Test
  void retentionDeletesMinutesAfterTheSettingHoursAfter400DaysAndNoDays() throws Exception {
    execute(
        "INSERT INTO click_counts (code, minute, clicks) VALUES ('a', '2026-11-15T23:59:00Z', 1),"
            + " ('a', '2026-11-16T00:00:00Z', 2), ('a', '2026-11-29T10:00:00Z', 3)");
    execute(
        "INSERT INTO click_hourly (code, hour, clicks, bot_clicks, visitors) VALUES"
            + " ('a', '2025-10-25T23:00:00Z', 1, 0, 1), ('a', '2025-10-26T00:00:00Z', 2, 0, 1)");
    execute(
        "INSERT INTO click_dimensions_hourly (code, hour, dimension, value, clicks) VALUES ('a',"
            + " '2025-10-25T23:00:00Z', 'country', 'DE', 1), ('a', '2025-10-26T00:00:00Z',"
            + " 'country', 'DE', 2)");
    execute(
        "INSERT INTO click_daily (code, day, clicks, bot_clicks, visitors) VALUES ('a',"
            + " '2020-01-01', 1, 0, 1)");

    long deleted = new Retention(dataSource, clock(NOON), 14).apply();

    assertThat(deleted).isEqualTo(3);
    assertThat(longs("SELECT clicks FROM click_counts ORDER BY minute")).containsExactly(2L, 3L);
    assertThat(longs("SELECT clicks FROM click_hourly")).containsExactly(2L);
    assertThat(longs("SELECT clicks FROM click_dimensions_hourly")).containsExactly(2L);
    assertThat(longs("SELECT clicks FROM click_daily")).containsExactly(1L);
    assertThat(new Retention(dataSource, clock(NOON), 14).apply()).isZero();
  }

  private static Clock clock(Instant instant) {
    return Clock.fixed(instant, ZoneOffset.UTC);
  }

  private List<LocalDate> days() throws Exception {
    List<LocalDate> days = new ArrayList<>();
    try (Connection c = PG.connect();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT day FROM visitor_salts ORDER BY day")) {
      while (rs.next()) {
        days.add(rs.getDate(1).toLocalDate());
      }
    }
    return days;
  }

  private List<Long> longs(String sql) throws Exception {
    List<Long> values = new ArrayList<>();
    try (Connection c = PG.connect();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      while (rs.next()) {
        values.add(rs.getLong(1));
      }
    }
    return values;
  }

  private static void execute(String sql) throws Exception {
    try (Connection c = PG.connect();
        Statement s = c.createStatement()) {
      s.execute(sql);
    }
  }
}
