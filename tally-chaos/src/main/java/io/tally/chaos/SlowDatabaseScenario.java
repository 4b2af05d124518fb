package io.tally.chaos;

import io.tally.embedded.PostgresPause;
import io.tally.local.RunningClickJob;
import io.tally.testing.PrometheusText;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Scenario 7: a slow database under sustained load: PostgreSQL is paused 300 ms of every 500 ms for
 * the phase. Redirects and the producer must not block (the slowest redirect is reported), the
 * producer's buffer must never fill (Kafka is healthy, so the database's pace must not reach the
 * redirect path), the job's backlog sits in the topic, bounded by the clicks sent, and the job must
 * catch up once the database is healthy (recovery: heal until every delivered click is counted).
 */
final class SlowDatabaseScenario extends OutageScenario {

  private static final String BUFFER_FREE = "tally_kafka_producer_buffer_available_bytes";

  private final AtomicBoolean slow = new AtomicBoolean();
  private double lowestBufferFree = Double.MAX_VALUE;
  private long largestBacklog;
  private Thread dutyCycle;

  SlowDatabaseScenario() {
    super(
        "slow-db",
        "7. slow PostgreSQL (paused 300 of every 500 ms) under load: nothing blocks, the job"
            + " catches up");
  }

  @Override
  Duration length(ChaosSettings settings) {
    return settings.slowPhase();
  }

  @Override
  void fault(ChaosStack stack) throws Exception {
    PostgresPause pause = PostgresPause.of(stack.services().dir().resolve("pg"));
    slow.set(true);
    dutyCycle =
        new Thread(
            () -> {
              try {
                while (slow.get()) {
                  pause.pause();
                  Thread.sleep(300);
                  pause.resume();
                  Thread.sleep(200);
                }
              } catch (Exception e) {
                slow.set(false);
              } finally {
                try {
                  pause.resume();
                } catch (Exception e) {
                  // heal() resumes again.
                }
              }
            },
            "slow-postgres");
    dutyCycle.start();
  }

  @Override
  void whileDown(ChaosStack stack, RunningClickJob job, int webPort, Outcome outcome) {
    Map<String, Double> metrics = PrometheusText.scrape(webPort);
    lowestBufferFree = Math.min(lowestBufferFree, PrometheusText.sum(metrics, BUFFER_FREE));
    long counted = stack.clicks();
    if (counted >= 0) {
      largestBacklog =
          Math.max(largestBacklog, (long) PrometheusText.sum(metrics, ACKED) - counted);
    }
  }

  @Override
  void afterLoad(ChaosStack stack, Outcome outcome) {
    outcome.check(
        "the producer's buffer never filled",
        lowestBufferFree > 0 && lowestBufferFree != Double.MAX_VALUE,
        String.format(Locale.ROOT, "lowest free %.0f KiB", lowestBufferFree / 1024));
    outcome.note(
        "job backlog (clicks in Kafka not yet in click_counts) peaked at " + largestBacklog);
  }

  @Override
  void heal(ChaosStack stack) throws Exception {
    slow.set(false);
    dutyCycle.join();
    PostgresPause.of(stack.services().dir().resolve("pg")).resume();
  }
}
