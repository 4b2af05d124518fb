package io.tally.redirect;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.event.ClickEvent;
import io.tally.redirect.links.LinkStore;
import io.tally.testing.KafkaExtension;
import io.tally.testing.PostgresExtension;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Tests for a {@link ClickSink} plugged into {@link RedirectWebServer} in place of Kafka's. */
class ClickSinkITCase {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();
  @RegisterExtension static final KafkaExtension KAFKA = new KafkaExtension();

  @Test
  void handsEachAnsweredRedirectToTheSinkWithItsEvent() {
    RecordingSink sink = new RecordingSink();
    try (RunningRedirectWeb web =
        RunningRedirectWeb.start(environment(), (config, linkDatabase, registry) -> sink)) {
      String code = web.createLink("https://example.com/sunk");
      long before = System.currentTimeMillis();

      assertThat(web.get("/" + code, "User-Agent", UserAgents.FIREFOX_LINUX).statusCode())
          .isEqualTo(302);
      assertThat(web.get("/no-such-link").statusCode()).isEqualTo(404);

      assertThat(sink.codes).containsExactly(code);
      ClickEvent event = sink.events.get(0);
      assertThat(event.code()).isEqualTo(code);
      assertThat(event.userAgent()).isEqualTo(UserAgents.FIREFOX_LINUX);
      assertThat(event.ts()).isBetween(before, System.currentTimeMillis());
      assertThat(event.visitor()).isNotEmpty();
      assertThat(sink.askedTwice).as("the same event on every call").containsExactly(event);
    }
  }

  @Test
  void opensTheSinkOnTheLinksDatabaseAndClosesItWithTheServer() throws SQLException {
    RecordingSink sink = new RecordingSink();
    AtomicReference<DataSource> given = new AtomicReference<>();
    RunningRedirectWeb web =
        RunningRedirectWeb.start(
            environment(),
            (config, linkDatabase, registry) -> {
              given.set(linkDatabase);
              return sink;
            });
    try (web;
        Connection c = given.get().getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT count(*) FROM links")) {
      assertThat(rs.next()).isTrue();
      assertThat(sink.closed).isFalse();
    }

    assertThat(sink.closed).isTrue();
  }

  @Test
  void answers503WhenTheSinkCannotReachTheDatabase() {
    ClickSink failing =
        click -> {
          throw new LinkStore.StoreException(
              "cannot count click", new SQLTransientConnectionException("no connection"));
        };
    try (RunningRedirectWeb web =
        RunningRedirectWeb.start(environment(), (config, linkDatabase, registry) -> failing)) {
      String code = web.createLink("https://example.com/uncounted");

      assertThat(web.get("/" + code).statusCode()).isEqualTo(503);
    }
  }

  private static Map<String, String> environment() {
    return RunningRedirectWeb.environment(PG, KAFKA, KAFKA.newTopic("clicks-sink", 1));
  }

  /** Keeps what each click offered; one per test, so no test sees another's clicks. */
  private static final class RecordingSink implements ClickSink {
    final List<String> codes = new CopyOnWriteArrayList<>();
    final List<ClickEvent> events = new CopyOnWriteArrayList<>();
    final List<ClickEvent> askedTwice = new CopyOnWriteArrayList<>();
    volatile boolean closed;

    @Override
    public void accept(Click click) {
      codes.add(click.code());
      events.add(click.event());
      askedTwice.add(click.event());
    }

    @Override
    public void close() {
      closed = true;
    }
  }
}
