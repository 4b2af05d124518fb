package io.tally.redirect;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.tally.testing.KafkaExtension;
import io.tally.testing.PostgresExtension;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tests for {@link ClickPublisher} inside a running redirect-web while its Kafka broker goes away and
 * comes back: redirects never wait, clicks that cannot be taken are dropped and counted, and counting
 * resumes by itself.
 *
 * <p>What the producer does when its only broker stops, as measured here: it keeps the topic's partition
 * metadata ({@code metadata.recovery.strategy=none}), so clicks go into its bounded buffer (counted as
 * sent) until the buffer is full; from then on a click is refused within {@code max.block.ms}, and the
 * clicks of the next {@link ClickPublisher#SHED_FOR} are dropped without asking, all counted with reason
 * {@code buffer_full}. The buffered clicks are delivered after the restart, inside
 * {@code delivery.timeout.ms}, so none fails.
 */
class BrokerOutageITCase {

  private static final Logger LOG = LoggerFactory.getLogger(BrokerOutageITCase.class);

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();
  @RegisterExtension static final KafkaExtension KAFKA = new KafkaExtension();

  /**
   * Four producer batches (batch.size is 64 KiB): small, so a buffering producer would fill it within a
   * few thousand clicks. Not 64 KiB: a buffer of one batch refuses clicks even while Kafka is healthy,
   * whenever the one batch is in flight.
   */
  private static final int BUFFER_BYTES = 4 * 64 * 1024;
  private static final int MIN_OUTAGE_CLICKS = 300;
  private static final int MAX_OUTAGE_CLICKS = 5_000;
  /** Generous for a loaded 2-core machine; a redirect that waited for Kafka would take seconds. */
  private static final Duration QUICKLY = Duration.ofSeconds(1);

  private static String topic;
  private static RunningRedirectWeb web;
  private static String code;

  @BeforeAll
  static void startServer() {
    // Its own topic: every record on it comes from this test's server, so the topic can be counted.
    topic = KAFKA.newTopic("clicks-outage", 1);
    Map<String, String> env = RunningRedirectWeb.environment(PG, KAFKA, topic);
    env.put("TALLY_KAFKA_BUFFER_BYTES", String.valueOf(BUFFER_BYTES));
    web = RunningRedirectWeb.start(env);
    code = web.createLink("https://example.com/during-the-outage");
    web.awaitProducerReady(code);
  }

  @AfterAll
  static void stopServer() {
    if (web != null) {
      web.close();
    }
  }

  @Test
  void redirectsKeepAnsweringQuicklyWhileKafkaIsDownAndCountingResumesWhenItReturns() {
    for (int i = 0; i < 20; i++) {
      assertThat(click().statusCode()).isEqualTo(302);
    }
    await("warm-up clicks acknowledged").atMost(Duration.ofSeconds(30))
        .untilAsserted(() -> assertThat(metric("acknowledged")).isEqualTo(metric("sent")));
    double droppedBeforeOutage = metric("dropped");

    // The broker is shared by every test class in this JVM: it must come back whatever happens here.
    try {
      KAFKA.broker().stop();

      long slowest = 0;
      int clicks = 0;
      while (clicks < MIN_OUTAGE_CLICKS || metric("dropped") == droppedBeforeOutage) {
        assertThat(clicks).as("clicks during the outage before one was dropped").isLessThan(MAX_OUTAGE_CLICKS);
        for (int i = 0; i < 100; i++, clicks++) {
          long start = System.nanoTime();
          HttpResponse<String> response = click();
          long took = System.nanoTime() - start;
          slowest = Math.max(slowest, took);
          assertThat(response.statusCode()).as("redirect %d during the outage", clicks).isEqualTo(302);
          assertThat(Duration.ofNanos(took)).as("redirect %d during the outage", clicks).isLessThan(QUICKLY);
        }
      }
      LOG.info("{} redirects during the outage, slowest {} ms; sent {}, acknowledged {}, dropped {}", clicks,
          slowest / 1_000_000, metric("sent"), metric("acknowledged"), web.series("tally_click_events_dropped_total"));

      assertThat(metric("dropped")).as("clicks dropped during the outage").isGreaterThan(droppedBeforeOutage);
      assertThat(metric("sent") + metric("dropped"))
          .as("every redirect either handed its click to the producer or dropped it")
          .isEqualTo(redirects());

      // Redirects keep working without Kafka, so health reports the outage but the instance still serves.
      HttpResponse<String> health = web.get("/health");
      assertThat(health.statusCode()).isEqualTo(200);
      JsonNode status = RunningRedirectWeb.json(health);
      assertThat(status.get("status").asText()).isEqualTo("serving");
      assertThat(status.get("kafka").asText()).isEqualTo("down");
    } finally {
      KAFKA.broker().restart();
    }

    // Right after the restart the producer may still lack the topic's metadata and refuse a few clicks.
    await("producer takes clicks again").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200))
        .untilAsserted(() -> {
          double sent = metric("sent");
          assertThat(click().statusCode()).isEqualTo(302);
          assertThat(metric("sent")).as("click handed to the producer").isEqualTo(sent + 1);
        });
    // Clicks buffered during the outage waited less than delivery.timeout.ms: delivered late, none failed.
    await("every accepted click acknowledged").atMost(Duration.ofSeconds(60))
        .untilAsserted(() -> assertThat(metric("acknowledged")).isEqualTo(metric("sent")));
    assertThat(metric("failed")).isZero();

    double dropped = metric("dropped");
    double sent = metric("sent");
    for (int i = 0; i < 10; i++) {
      assertThat(click().statusCode()).isEqualTo(302);
    }
    assertThat(metric("sent")).as("new clicks handed to the producer").isEqualTo(sent + 10);
    assertThat(metric("dropped")).as("new clicks dropped").isEqualTo(dropped);
    await("new clicks acknowledged").atMost(Duration.ofSeconds(60))
        .untilAsserted(() -> assertThat(metric("acknowledged")).isEqualTo(sent + 10));

    // What the counters claim is what the topic holds: each acknowledged click exactly once.
    try (ClickTopicReader reader = new ClickTopicReader(KAFKA.bootstrapServers(), topic)) {
      assertThat(reader.recordCount()).isEqualTo((long) metric("acknowledged"));
    }
    await("health back to kafka up").atMost(Duration.ofSeconds(30))
        .untilAsserted(() -> assertThat(RunningRedirectWeb.json(web.get("/health")).get("kafka").asText())
            .isEqualTo("up"));
  }

  private static HttpResponse<String> click() {
    return web.get("/" + code, "User-Agent", UserAgents.CHROME_WINDOWS);
  }

  private static double redirects() {
    return web.series("tally_redirects_total").get("status=\"302\"");
  }

  private static double metric(String counter) {
    return web.metric("tally_click_events_" + counter + "_total");
  }
}
