package io.tally.redirect;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.tally.testing.KafkaExtension;
import io.tally.testing.PostgresExtension;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tests for {@link ClickPublisher} inside a running redirect-web while its Kafka broker goes away
 * and comes back: redirects never wait, every click is either acknowledged or dropped and counted
 * with its reason, and counting resumes by itself.
 *
 * <p>What the producer does when its only broker stops, as measured here: it keeps the topic's
 * partition metadata ({@code metadata.recovery.strategy=none}), so clicks go into its bounded
 * buffer until the buffer is full; from then on a click is refused within {@code max.block.ms}, and
 * the clicks of the next {@link ClickPublisher#SHED_FOR} are dropped without asking, all counted
 * with reason {@code buffer_full}. Buffered clicks are delivered after the restart if they waited
 * less than {@code delivery.timeout.ms}, and dropped with reason {@code delivery_timeout}
 * otherwise.
 */
class BrokerOutageITCase {

  private static final Logger LOG = LoggerFactory.getLogger(BrokerOutageITCase.class);

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();
  @RegisterExtension static final KafkaExtension KAFKA = new KafkaExtension();

  /**
   * Eight producer batches (batch.size is 64 KiB): small, so that the outage fills it within a few
   * thousand clicks. Not fewer: the producer holds a batch's 64 KiB until the broker acknowledges
   * it, and with up to five requests in flight and one batch filling, a buffer of four batches
   * refused clicks while Kafka was healthy.
   */
  private static final int BUFFER_BYTES = 8 * 64 * 1024;

  private static final int MIN_OUTAGE_CLICKS = 300;
  private static final int MAX_OUTAGE_CLICKS = 20_000;

  /**
   * Far shorter than the outage of the test that outlasts it, far longer than a click's normal
   * delivery.
   */
  private static final Duration SHORT_DELIVERY_TIMEOUT = Duration.ofSeconds(3);

  /** Generous for a loaded 2-core machine; a redirect that waited for Kafka would take seconds. */
  private static final Duration QUICKLY = Duration.ofSeconds(1);

  private String code;
  private RunningRedirectWeb web;

  @AfterEach
  void stopServer() {
    if (web != null) {
      web.close();
    }
  }

  @Test
  void redirectsKeepAnsweringQuicklyWhileKafkaIsDownAndBufferedClicksAreDeliveredWhenItReturns() {
    String topic = startServer(RedirectWebConfig.DEFAULT_KAFKA_DELIVERY_TIMEOUT);
    warmUp();
    double droppedBeforeOutage = metric("dropped");

    // The broker is shared by every test class in this JVM: it must come back whatever happens
    // here.
    try {
      KAFKA.broker().stop();

      long slowest = 0;
      int clicks = 0;
      while (clicks < MIN_OUTAGE_CLICKS || metric("dropped") == droppedBeforeOutage) {
        assertThat(clicks)
            .as("clicks during the outage before one was dropped")
            .isLessThan(MAX_OUTAGE_CLICKS);
        for (int i = 0; i < 100; i++, clicks++) {
          long start = System.nanoTime();
          HttpResponse<String> response = click();
          long took = System.nanoTime() - start;
          slowest = Math.max(slowest, took);
          assertThat(response.statusCode())
              .as("redirect %d during the outage", clicks)
              .isEqualTo(302);
          assertThat(Duration.ofNanos(took))
              .as("redirect %d during the outage", clicks)
              .isLessThan(QUICKLY);
        }
      }
      LOG.info(
          "{} redirects during the outage, slowest {} ms; sent {}, acknowledged {}, dropped {}",
          clicks,
          slowest / 1_000_000,
          metric("sent"),
          metric("acknowledged"),
          dropsByReason());

      assertThat(dropped("buffer_full")).as("clicks dropped for a full buffer").isPositive();
      assertThat(metric("sent")).as("every redirect published its click").isEqualTo(redirects());

      // Redirects keep working without Kafka, so health reports the outage but the instance still
      // serves.
      await("health reporting the outage")
          .atMost(Duration.ofSeconds(10))
          .untilAsserted(
              () -> {
                HttpResponse<String> health = web.get("/health");
                assertThat(health.statusCode()).isEqualTo(200);
                JsonNode status = RunningRedirectWeb.json(health);
                assertThat(status.get("status").asText()).isEqualTo("serving");
                assertThat(status.get("kafka").asText()).isEqualTo("down");
              });
    } finally {
      KAFKA.broker().restart();
    }

    awaitClicksAcknowledgedAgain();
    // The clicks buffered during the outage waited less than delivery.timeout.ms: delivered late,
    // none lost.
    awaitNothingInFlight();
    assertThat(dropped("delivery_timeout")).isZero();
    assertThat(metric("dropped"))
        .as("dropped only for a full buffer, or for metadata right after the restart")
        .isEqualTo(dropped("buffer_full") + dropped("metadata_unavailable"));

    assertNewClicksAcknowledged();
    assertTheTopicHoldsEveryAcknowledgedClick(topic);
    await("health back to kafka up")
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () ->
                assertThat(RunningRedirectWeb.json(web.get("/health")).get("kafka").asText())
                    .isEqualTo("up"));
  }

  @Test
  void clicksBufferedLongerThanTheDeliveryTimeoutAreDroppedAndCountedAndLaterClicksDelivered() {
    String topic = startServer(SHORT_DELIVERY_TIMEOUT);
    warmUp();
    int outageClicks = 200;

    try {
      KAFKA.broker().stop();
      for (int i = 0; i < outageClicks; i++) {
        assertThat(click().statusCode()).isEqualTo(302);
      }
      double refused =
          dropped("buffer_full") + dropped("metadata_unavailable") + dropped("rejected");
      assertThat(refused)
          .as("clicks refused: the buffer has room and the metadata is kept")
          .isZero();

      // The outage outlasts the delivery timeout: every buffered click leaves the buffer, counted.
      await("buffered clicks given up")
          .atMost(Duration.ofSeconds(60))
          .untilAsserted(() -> assertThat(dropped("delivery_timeout")).isEqualTo(outageClicks));
      assertThat(metric("sent"))
          .as("sent = acknowledged + dropped (all reasons) during the outage")
          .isEqualTo(metric("acknowledged") + metric("dropped"));
      LOG.info(
          "after an outage longer than the delivery timeout: sent {}, acknowledged {}, dropped {}",
          metric("sent"),
          metric("acknowledged"),
          dropsByReason());
    } finally {
      KAFKA.broker().restart();
    }

    awaitClicksAcknowledgedAgain();
    assertNewClicksAcknowledged();
    awaitNothingInFlight();
    assertThat(metric("sent")).as("every redirect published its click").isEqualTo(redirects());
    assertTheTopicHoldsEveryAcknowledgedClick(topic);
  }

  /**
   * Starts redirect-web on a topic of its own (every record on it comes from this server) and
   * returns it.
   */
  private String startServer(Duration deliveryTimeout) {
    String topic = KAFKA.newTopic("clicks-outage", 1);
    Map<String, String> env = RunningRedirectWeb.environment(PG, KAFKA, topic);
    env.put("TALLY_KAFKA_BUFFER_BYTES", String.valueOf(BUFFER_BYTES));
    env.put("TALLY_KAFKA_DELIVERY_TIMEOUT_MS", String.valueOf(deliveryTimeout.toMillis()));
    web = RunningRedirectWeb.start(env);
    code = web.createLink("https://example.com/during-the-outage");
    web.awaitProducerReady(code);
    return topic;
  }

  /** Clicks that Kafka acknowledges, every one: the producer is ready, as before an outage. */
  private void warmUp() {
    double acknowledged = metric("acknowledged");
    for (int i = 0; i < 20; i++) {
      assertThat(click().statusCode()).isEqualTo(302);
    }
    awaitNothingInFlight();
    assertThat(metric("acknowledged"))
        .as("warm-up clicks acknowledged; drops %s", dropsByReason())
        .isEqualTo(acknowledged + 20);
  }

  /**
   * Right after the restart the producer may still lack the topic's metadata and refuse a few
   * clicks.
   */
  private void awaitClicksAcknowledgedAgain() {
    double acknowledged = metric("acknowledged");
    await("producer delivers clicks again")
        .atMost(Duration.ofSeconds(60))
        .pollInterval(Duration.ofMillis(200))
        .untilAsserted(
            () -> {
              assertThat(click().statusCode()).isEqualTo(302);
              assertThat(metric("acknowledged")).isGreaterThan(acknowledged);
            });
  }

  private void assertNewClicksAcknowledged() {
    awaitNothingInFlight();
    double dropped = metric("dropped");
    double acknowledged = metric("acknowledged");
    for (int i = 0; i < 10; i++) {
      assertThat(click().statusCode()).isEqualTo(302);
    }
    await("new clicks acknowledged")
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(() -> assertThat(metric("acknowledged")).isEqualTo(acknowledged + 10));
    assertThat(metric("dropped")).as("new clicks dropped").isEqualTo(dropped);
  }

  /**
   * Waits until every published click is acknowledged or dropped: sent = acknowledged + dropped,
   * exactly.
   */
  private void awaitNothingInFlight() {
    await("every click acknowledged or dropped")
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () -> assertThat(metric("acknowledged") + metric("dropped")).isEqualTo(metric("sent")));
  }

  /** What the counters claim is what the topic holds: each acknowledged click exactly once. */
  private void assertTheTopicHoldsEveryAcknowledgedClick(String topic) {
    try (ClickTopicReader reader = new ClickTopicReader(KAFKA.bootstrapServers(), topic)) {
      assertThat(reader.recordCount()).isEqualTo((long) metric("acknowledged"));
    }
  }

  private HttpResponse<String> click() {
    return web.get("/" + code, "User-Agent", UserAgents.CHROME_WINDOWS);
  }

  private double redirects() {
    return web.series("tally_redirects_total").get("status=\"302\"");
  }

  private double metric(String counter) {
    return web.metric("tally_click_events_" + counter + "_total");
  }

  private double dropped(String reason) {
    return web.series("tally_click_events_dropped_total")
        .getOrDefault("reason=\"" + reason + "\"", 0.0);
  }

  private Map<String, Double> dropsByReason() {
    return web.series("tally_click_events_dropped_total");
  }
}
