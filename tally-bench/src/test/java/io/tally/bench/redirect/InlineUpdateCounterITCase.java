package io.tally.bench.redirect;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tally.event.ClickEvent;
import io.tally.redirect.ClickSink;
import io.tally.redirect.links.LinkStore;
import io.tally.schema.TallySchema;
import io.tally.testing.PostgresExtension;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.ds.PGSimpleDataSource;

/** Tests for {@link InlineUpdateCounter} on a real PostgreSQL with the product's schema. */
class InlineUpdateCounterITCase {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  @Test
  void addsTheColumnTheProductNoLongerHasAndCountsEveryClickInIt() throws SQLException {
    PGSimpleDataSource database = migratedDatabase("inline_counter");
    execute(
        database,
        "INSERT INTO links (code, url) VALUES ('hot', 'https://example.com/h'),"
            + " ('cold', 'https://example.com/c')");
    assertThat(linkColumns(database))
        .as("the product's schema")
        .contains("code")
        .doesNotContain("clicks");

    ClickSink counter = InlineUpdateCounter.open(database);
    for (int i = 0; i < 3; i++) {
      counter.accept(clickOn("hot"));
    }
    InlineUpdateCounter.open(database).accept(clickOn("cold"));

    assertThat(clicksOf(database, "hot")).isEqualTo(3);
    assertThat(clicksOf(database, "cold"))
        .as("opened again on a database that has the column")
        .isEqualTo(1);
  }

  @Test
  void aClickItCannotCountIsADatabaseFailureOfTheRedirect() throws SQLException {
    PGSimpleDataSource database = migratedDatabase("inline_counter_down");
    ClickSink counter = InlineUpdateCounter.open(database);
    database.setServerNames(new String[] {"127.0.0.1"});
    database.setPortNumbers(new int[] {1});

    assertThatThrownBy(() -> counter.accept(clickOn("hot")))
        .isInstanceOf(LinkStore.StoreException.class)
        .hasMessageStartingWith("cannot count click");
  }

  /** A click that offers only its code: the counter must not make the event. */
  private static ClickSink.Click clickOn(String code) {
    return new ClickSink.Click() {
      @Override
      public String code() {
        return code;
      }

      @Override
      public ClickEvent event() {
        throw new AssertionError("the inline counter needs only the code");
      }
    };
  }

  /**
   * A database of its own with every migration applied, so that adding the column touches no other
   * test.
   */
  private static PGSimpleDataSource migratedDatabase(String name) {
    String jdbcUrl = PG.createDatabase(name);
    TallySchema.migrate(jdbcUrl, PG.user(), PG.password());
    PGSimpleDataSource database = new PGSimpleDataSource();
    database.setUrl(jdbcUrl);
    database.setUser(PG.user());
    database.setPassword(PG.password());
    return database;
  }

  private static List<String> linkColumns(PGSimpleDataSource database) throws SQLException {
    try (Connection c = database.getConnection();
        ResultSet rs = c.getMetaData().getColumns(null, null, "links", null)) {
      List<String> columns = new ArrayList<>();
      while (rs.next()) {
        columns.add(rs.getString("COLUMN_NAME"));
      }
      return columns;
    }
  }

  private static long clicksOf(PGSimpleDataSource database, String code) throws SQLException {
    try (Connection c = database.getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT clicks FROM links WHERE code = ?")) {
      ps.setString(1, code);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  private static void execute(PGSimpleDataSource database, String sql) throws SQLException {
    try (Connection c = database.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      ps.execute();
    }
  }
}
