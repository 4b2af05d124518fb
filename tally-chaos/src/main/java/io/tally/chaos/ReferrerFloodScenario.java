package io.tally.chaos;

import io.tally.counting.records.ClickTally;
import io.tally.event.ClickEvent;
import io.tally.local.ClickJobProcess;
import io.tally.testing.ClickEvents;
import io.tally.testing.ClickStream;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import org.apache.kafka.clients.producer.KafkaProducer;

/**
 * Scenario 10: one link gets a flood of clicks, each from a referrer host never seen before (the
 * header is the client's to make up), while another link gets a click every half second. The flood
 * must neither slow the other link's counts (each of its clicks visible in {@code click_counts}
 * within 10 s) nor grow its own rows: at most {@code --max-dimension-values} referrers per hour
 * plus {@code (other)}, adding up to its clicks, every click counted once.
 */
final class ReferrerFloodScenario implements Scenario {

  private static final String FLOODED = "flood";
  private static final String STEADY = "steady";
  private static final int FLOOD_PER_SECOND = 1_000;
  private static final Duration VISIBLE_WITHIN = Duration.ofSeconds(10);
  private static final int KEPT_REFERRERS = 200;

  @Override
  public String name() {
    return "referrer-flood";
  }

  @Override
  public String title() {
    return "10. a flood of made-up referrers on one link: another link's clicks visible within 10"
        + " s, rows bounded";
  }

  @Override
  public Outcome run(ChaosStack stack) throws Exception {
    Outcome outcome = new Outcome(name());
    ClickJobProcess job = stack.job();
    job.start(Optional.empty());
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
            new ClickEvent(
                c.clickId(),
                FLOODED,
                now,
                c.visitor(),
                ClickEvent.NO_RANGE_VISITOR,
                ClickEvents.DESKTOP_BROWSER,
                "r" + flooded++ + ".spam.example",
                c.country(),
                false,
                null));
      }
      StreamSender.send(producer, ClickEvents.minimal(UUID.randomUUID(), STEADY, now, false));
      producer.flush();
      steady++;
      steadyShown.sent(System.currentTimeMillis());
      steadyShown.watch();
      Thread.sleep(Math.max(0, 500 - (System.currentTimeMillis() - now)));
    }
    outcome.clicksSent = flooded + steady;
    long total = flooded + steady;
    boolean counted =
        ChaosStack.await(
            () -> stack.clicks(FLOODED) + stack.clicks(STEADY) == total, stack.settings().settle());
    steadyShown.watch();
    outcome.check(
        "every click counted once",
        counted,
        (stack.clicks(FLOODED) + stack.clicks(STEADY)) + " of " + total);
    outcome.check(
        "each click on the other link visible within " + VISIBLE_WITHIN.toSeconds() + " s",
        steadyShown.slowest() <= VISIBLE_WITHIN.toMillis(),
        steadyShown.describe());
    long[] referrers = referrerRows(stack);
    outcome.check(
        "the flooded link keeps at most " + KEPT_REFERRERS + " referrers an hour, plus (other)",
        referrers[0] <= (KEPT_REFERRERS + 1) * referrers[2],
        referrers[0]
            + " rows over "
            + referrers[2]
            + " hours for "
            + flooded
            + " distinct referrers");
    outcome.check(
        "its referrer rows add up to its clicks",
        referrers[1] == stack.clicks(FLOODED),
        referrers[1] + " = " + stack.clicks(FLOODED));
    outcome.deadLetters.putAll(stack.deadLetters().byReason());
    outcome.restarts = job.restarts();
    outcome.drift =
        java.util.Map.of(
            "click_counts total against sent",
            Math.abs(total - stack.clicks(FLOODED) - stack.clicks(STEADY)));
    return outcome;
  }

  /** The flooded link's referrer rows: how many, the clicks they hold, and over how many hours. */
  private static long[] referrerRows(ChaosStack stack) throws java.sql.SQLException {
    try (Connection c = stack.services().connect();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT count(*), COALESCE(sum(clicks), 0), count(DISTINCT hour)"
                    + " FROM click_dimensions_hourly WHERE code = ? AND dimension = ?")) {
      ps.setString(1, FLOODED);
      ps.setString(2, ClickTally.REFERRER);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return new long[] {rs.getLong(1), rs.getLong(2), Math.max(1, rs.getLong(3))};
      }
    }
  }
}
