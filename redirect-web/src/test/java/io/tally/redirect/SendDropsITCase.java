package io.tally.redirect;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.tally.testing.ClickEvents;
import io.tally.testing.PostgresExtension;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The clicks redirect-web could not hand to Kafka, kept per instance and minute in PostgreSQL as
 * its least-privilege login writes them.
 */
class SendDropsITCase {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  private static final Instant T = Instant.parse("2026-12-05T10:15:20Z");

  /** How long after its end a minute may still take a drop. */
  private static final Duration SETTLE = Duration.ofMinutes(2);

  private final MovableClock clock = new MovableClock(T);
  private PGSimpleDataSource web;

  @BeforeEach
  void setUp() {
    PG.truncateAll();
    web = new PGSimpleDataSource();
    web.setUrl(PG.jdbcUrl());
    web.setUser(PG.loginWith("tally_redirect_web"));
    web.setPassword(PostgresExtension.LOGIN_PASSWORD);
  }

  @Test
  void eachMinutesWholeTotalIsWrittenAndAWriteSentAgainChangesNothing() {
    SendDrops drops = new SendDrops(web, clock, "web-1", SETTLE, Duration.ZERO);
    drops.record(clock.millis());
    drops.record(clock.millis());
    drops.write();
    drops.record(clock.millis());
    clock.now = T.plusSeconds(60);
    drops.record(clock.millis());
    drops.write();
    drops.write();

    assertThat(rows())
        .isEqualTo(
            Map.of(
                "web-1@2026-12-05 10:15:00+00", List.of(3L),
                "web-1@2026-12-05 10:16:00+00", List.of(1L)));
  }

  @Test
  void instancesKeepRowsOfTheirOwnAndASettledMinuteIsForgottenOnceWritten() {
    SendDrops first = new SendDrops(web, clock, "web-1", SETTLE, Duration.ZERO);
    SendDrops second = new SendDrops(web, clock, "web-2", SETTLE, Duration.ZERO);
    first.record(clock.millis());
    second.record(clock.millis());
    second.record(clock.millis());
    first.write();
    second.write();
    clock.now = T.plus(Duration.ofMinutes(2));
    first.write();
    PG.truncateAll();
    first.write();
    assertThat(rows()).as("not settled: written again").hasSize(1);
    clock.now = T.plus(Duration.ofMinutes(4));
    first.write();
    PG.truncateAll();
    first.write();

    assertThat(rows()).as("nothing left to write again").isEmpty();
    second.close();
    assertThat(rows()).isEqualTo(Map.of("web-2@2026-12-05 10:15:00+00", List.of(2L)));
  }

  @Test
  void minutesWaitWhilePostgresqlIsAwayAndAreWrittenWhenItIsBack() {
    PGSimpleDataSource away = new PGSimpleDataSource();
    away.setUrl(PG.jdbcUrl());
    away.setUser(web.getUser());
    away.setPassword("not-the-password");
    SendDrops drops = new SendDrops(away, clock, "web-1", SETTLE, Duration.ZERO);
    drops.record(clock.millis());
    clock.now = T.plus(Duration.ofMinutes(5));
    drops.write();
    away.setPassword(PostgresExtension.LOGIN_PASSWORD);
    drops.write();

    assertThat(rows()).isEqualTo(Map.of("web-1@2026-12-05 10:15:00+00", List.of(1L)));
  }

  @Test
  void aDropIsKeptByTheMinuteItsClickWasAnsweredIn() {
    SendDrops drops = new SendDrops(web, clock, "web-1", SETTLE, Duration.ZERO);
    clock.now = T.plus(Duration.ofMinutes(1));
    drops.record(T.toEpochMilli());
    drops.write();

    assertThat(rows()).isEqualTo(Map.of("web-1@2026-12-05 10:15:00+00", List.of(1L)));
  }

  @Test
  void aClickThePublisherDropsIsKeptByItsMinute() {
    MockProducer<String, byte[]> producer =
        new MockProducer<>(false, null, new StringSerializer(), new ByteArraySerializer());
    SendDrops drops = new SendDrops(web, clock, "web-1", SETTLE, Duration.ZERO);
    try (ClickPublisher publisher =
        new ClickPublisher(
            producer, "clicks", new SimpleMeterRegistry(), System::nanoTime, drops)) {
      publisher.publish(ClickEvents.minimal(UUID.randomUUID(), "abc", T.toEpochMilli(), false));
      producer.errorNext(new TimeoutException("expired"));
    }

    assertThat(rows()).isEqualTo(Map.of("web-1@2026-12-05 10:15:00+00", List.of(1L)));
  }

  private static Map<String, List<Long>> rows() {
    return PG.rows(
        "SELECT instance || '@' || to_char(minute AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS')"
            + " || '+00', dropped FROM click_send_drops");
  }

  /** A clock a test moves. */
  private static final class MovableClock extends Clock {
    private Instant now;

    MovableClock(Instant now) {
      this.now = now;
    }

    @Override
    public ZoneId getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
      return this;
    }

    @Override
    public Instant instant() {
      return now;
    }
  }
}
