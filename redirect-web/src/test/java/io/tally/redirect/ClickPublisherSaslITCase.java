package io.tally.redirect;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.tally.embedded.EmbeddedKafkaBroker;
import io.tally.testing.ClickEvents;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.admin.NewTopic;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * redirect-web publishing to a broker that takes only SASL logins on its listener: with the
 * settings of {@code TALLY_KAFKA_SECURITY_PROTOCOL} and the SASL variables its clicks are
 * acknowledged, and with a wrong password none is, each counted as dropped.
 */
class ClickPublisherSaslITCase {

  private static final String TOPIC = "clicks";

  @TempDir static Path dir;

  private static EmbeddedKafkaBroker broker;

  @BeforeAll
  static void startBroker() {
    broker =
        EmbeddedKafkaBroker.startWithSasl(
            dir.resolve("kafka"), Map.of("redirect-web", "s3cret-pw"));
    broker.createTopics(List.of(new NewTopic(TOPIC, 2, (short) 1)));
  }

  @AfterAll
  static void stopBroker() {
    broker.close();
  }

  @Test
  void clicksAreAcknowledgedOverSaslWithTheRightPasswordAndDroppedWithAWrongOne() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    try (ClickPublisher publisher = ClickPublisher.create(config("s3cret-pw"), registry, null)) {
      publisher.warmUp(Duration.ofSeconds(30));
      publisher.publish(
          ClickEvents.minimal(UUID.randomUUID(), "abc", System.currentTimeMillis(), false));
      await("acknowledged over SASL")
          .atMost(Duration.ofSeconds(30))
          .untilAsserted(() -> assertThat(count(registry, "acknowledged")).isEqualTo(1));
    }

    SimpleMeterRegistry refused = new SimpleMeterRegistry();
    try (ClickPublisher publisher = ClickPublisher.create(config("wrong"), refused, null)) {
      publisher.publish(
          ClickEvents.minimal(UUID.randomUUID(), "abc", System.currentTimeMillis(), false));
      await("dropped for the failed login")
          .atMost(Duration.ofSeconds(60))
          .untilAsserted(
              () ->
                  assertThat(
                          refused.find("tally.click.events.dropped").counters().stream()
                              .mapToDouble(Counter::count)
                              .sum())
                      .isEqualTo(1));
      assertThat(count(refused, "acknowledged")).isZero();
    }
  }

  private static RedirectWebConfig config(String password) {
    Map<String, String> env = new HashMap<>();
    env.put("TALLY_PG_URL", "jdbc:postgresql://localhost:5432/postgres");
    env.put("TALLY_IP_HASH_SECRET", "0123456789abcdef0123456789abcdef");
    env.put("TALLY_API_KEYS", "key-1-0123456789abcdefghijklmnopqrstuv");
    env.put("TALLY_KAFKA_BOOTSTRAP", broker.saslBootstrapServers());
    env.put("TALLY_KAFKA_SECURITY_PROTOCOL", "SASL_PLAINTEXT");
    env.put("TALLY_KAFKA_SASL_MECHANISM", "PLAIN");
    env.put("TALLY_KAFKA_SASL_USERNAME", "redirect-web");
    env.put("TALLY_KAFKA_SASL_PASSWORD", password);
    env.put("TALLY_KAFKA_DELIVERY_TIMEOUT_MS", "5000");
    return RedirectWebConfig.fromEnv(env);
  }

  private static double count(SimpleMeterRegistry registry, String name) {
    return registry.get("tally.click.events." + name).counter().count();
  }
}
