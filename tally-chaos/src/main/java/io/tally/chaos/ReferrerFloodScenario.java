package io.tally.chaos;

import io.tally.event.ClickEvent;
import io.tally.testing.ClickEvents;
import io.tally.testing.ClickStream;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.producer.KafkaProducer;

/**
 * Scenario 10: one link gets a flood of clicks, each from a referrer host never seen before (the
 * header is the client's to make up), while another link gets a click every half second. The flood
 * must neither slow the other link's counts (each of its clicks visible in {@code click_counts}
 * within 10 s) nor grow its own rows: at most {@code --max-dimension-values} referrers per hour
 * plus {@code (other)}, adding up to its clicks, every click counted once.
 */
final class ReferrerFloodScenario extends Scenario {

  private static final String FLOODED = "flood";
  private static final String STEADY = "steady";
  private static final int FLOOD_PER_SECOND = 1_000;
  private static final Duration VISIBLE_WITHIN = Duration.ofSeconds(10);
  private static final int KEPT_REFERRERS = 200;

  ReferrerFloodScenario() {
    super(
        "referrer-flood",
        "10. a flood of made-up referrers on one link: another link's clicks visible within 10"
            + " s, rows bounded");
  }

  @Override
  public Outcome run(ChaosStack stack) throws Exception {
    Outcome outcome = new Outcome(name());
    stack.startJob();
    KafkaProducer<String, byte[]> producer = stack.producer();
    ClickStream people = new ClickStream(click -> {}, "x", 1, 0, 1, 1, 0, 10);
    long end = System.nanoTime() + stack.settings().outage().toNanos();
    Visibility steadyShown = new Visibility(stack, STEADY, 0);
    long flooded = 0;
    long steady = 0;
    while (System.nanoTime() < end) {
      long now = System.currentTimeMillis();
      for (int i = 0; i < FLOOD_PER_SECOND / 2; i++) {
        ClickEvent c = people.click(now);
        StreamSender.send(
            producer,
            ClickEvent.builder(c.clickId(), FLOODED, now)
                .visitor(c.visitor())
                .userAgent(ClickEvents.DESKTOP_BROWSER)
                .referrerDomain("r" + flooded++ + ".spam.example")
                .country(c.country())
                .build());
      }
      StreamSender.send(producer, ClickEvents.minimal(UUID.randomUUID(), STEADY, now, false));
      producer.flush();
      steady++;
      steadyShown.sent(System.currentTimeMillis());
      steadyShown.watch();
      Thread.sleep(Math.max(0, 500 - (System.currentTimeMillis() - now)));
    }
    long total = flooded + steady;
    outcome.clicksSent = total;
    boolean counted = ChaosStack.await(() -> stack.clicks() == total, stack.settings().settle());
    steadyShown.watch();
    outcome.check("every click counted once", counted, stack.clicks() + " of " + total);
    outcome.check(
        "each click on the other link visible within " + VISIBLE_WITHIN.toSeconds() + " s",
        steadyShown.slowest() <= VISIBLE_WITHIN.toMillis(),
        steadyShown.describe());
    String referrers = " FROM click_dimensions_hourly WHERE code = ? AND dimension = 'referrer'";
    long rows = stack.count("SELECT count(*)" + referrers, FLOODED);
    long hours = Math.max(1, stack.count("SELECT count(DISTINCT hour)" + referrers, FLOODED));
    outcome.check(
        "the flooded link keeps at most " + KEPT_REFERRERS + " referrers an hour, plus (other)",
        rows <= (KEPT_REFERRERS + 1) * hours,
        rows + " rows over " + hours + " hours for " + flooded + " distinct referrers");
    long referrerClicks = stack.count("SELECT COALESCE(sum(clicks), 0)" + referrers, FLOODED);
    outcome.check(
        "its referrer rows add up to its clicks",
        referrerClicks == stack.clicks(FLOODED),
        referrerClicks + " = " + stack.clicks(FLOODED));
    stack.recordLettersAndRestarts(outcome);
    outcome.drift = Map.of("click_counts total against sent", Math.abs(total - stack.clicks()));
    return outcome;
  }
}
