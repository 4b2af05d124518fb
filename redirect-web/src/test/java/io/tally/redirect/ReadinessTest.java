package io.tally.redirect;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Tests for {@link Readiness}. */
class ReadinessTest {

  @Test
  void aFloodOfHealthChecksAsksNeitherPostgresNorKafka() {
    AtomicInteger databaseProbes = new AtomicInteger();
    AtomicInteger kafkaProbes = new AtomicInteger();
    try (Readiness readiness =
        Readiness.probing(
            () -> databaseProbes.incrementAndGet() > 0,
            () -> kafkaProbes.incrementAndGet() < 0,
            Duration.ofHours(1))) {
      for (int i = 0; i < 10_000; i++) {
        assertThat(readiness.state()).isEqualTo(new Readiness.State(true, false));
      }

      assertThat(databaseProbes).hasValue(1);
      assertThat(kafkaProbes).hasValue(1);
    }
  }

  @Test
  void followsWhatTheBackgroundProbesFind() {
    AtomicBoolean kafkaUp = new AtomicBoolean(true);
    try (Readiness readiness = Readiness.probing(() -> true, kafkaUp::get, Duration.ofMillis(20))) {
      assertThat(readiness.state().kafka()).isTrue();

      kafkaUp.set(false);

      await().atMost(Duration.ofSeconds(5)).until(() -> !readiness.state().kafka());
    }
  }
}
