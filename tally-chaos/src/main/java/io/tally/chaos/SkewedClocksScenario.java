package io.tally.chaos;

import io.tally.event.ClickEvent;
import io.tally.local.ClickJobProcess;
import io.tally.reconcile.ReconcileReport;
import io.tally.testing.ClickOracle;
import io.tally.testing.ClickStream;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.clients.producer.KafkaProducer;

/**
 * Scenario 8: three redirect-web hosts write the same traffic, one with a right clock, one 15
 * minutes fast, one 15 minutes slow: every click is stamped by its host, and counts at that time.
 * The streaming job cannot count what the slow host stamped after the fast host moved event time on
 * (late data, in the dead-letter topic); {@code ./tally reconcile} over the days of the data then
 * reads every record, whatever any host's clock says, and every table equals the truth.
 */
final class SkewedClocksScenario implements Scenario {

  static final long SKEW = 15 * ClickOracle.MINUTE;

  @Override
  public String name() {
    return "skewed-clocks";
  }

  @Override
  public String title() {
    return "8. hosts 15 minutes fast and slow: the stream counts what is on time, reconcile the"
        + " rest (drift 0)";
  }

  @Override
  public Outcome run(ChaosStack stack) throws Exception {
    Outcome outcome = new Outcome(name());
    long from = StreamSender.dataStart(System.currentTimeMillis());
    long span = 30 * ClickOracle.MINUTE;
    long events = stack.settings().validEvents();
    ClickOracle truth = new ClickOracle();
    ClickStream traffic = new ClickStream(click -> {}, "k", 50, from, span, events, 0, 8);
    ClickJobProcess job = stack.job();
    job.start(Optional.empty());
    KafkaProducer<String, byte[]> producer = stack.producer();
    long[] skews = {0, SKEW, -SKEW};
    for (long i = 0; i < events; i++) {
      long happened = from + i * span / events;
      ClickEvent click = traffic.click(happened + skews[(int) (i % skews.length)]);
      truth.add(click);
      StreamSender.send(producer, click);
    }
    producer.flush();
    stack.pushWatermarks(producer);
    outcome.clicksSent = events;

    // Every minute of the data closed in the stream (the watermark clicks are stamped now) before
    // the recount judges them: a minute still open for the stream is left alone by reconcile.
    long dataEnd = from + span + SKEW + ClickOracle.MINUTE;
    boolean closed =
        ChaosStack.await(
            () -> LateClicksScenario.progress(stack) >= dataEnd, stack.settings().settle());
    outcome.check(
        "the stream's event time passed the data",
        closed,
        "closed before " + Instant.ofEpochMilli(LateClicksScenario.progress(stack)));
    boolean lettered =
        ChaosStack.await(
            () -> stack.deadLetters().byReason().getOrDefault("late", 0L) > 0,
            Duration.ofSeconds(30));
    outcome.deadLetters.putAll(stack.deadLetters().byReason());
    outcome.check(
        "the slow host's clicks reached the stream late",
        lettered,
        outcome.deadLetters.getOrDefault("late", 0L) + " late letters");
    outcome.note("drift before reconcile (the late clicks): " + Drift.total(stack.drift(truth)));

    long start = System.nanoTime();
    long firstDay = ClickOracle.floor(from - SKEW, ClickOracle.DAY);
    long lastDay = ClickOracle.floor(from + span + SKEW, ClickOracle.DAY);
    ReconcileReport report =
        LateClicksScenario.reconcile(stack, firstDay, lastDay + ClickOracle.DAY);
    Map<String, Long> drift = stack.awaitDriftZero(truth, Duration.ofSeconds(10));
    outcome.recovery = Duration.ofNanos(System.nanoTime() - start);
    outcome.drift = drift;
    outcome.restarts = job.restarts();
    outcome.note(
        "reconcile: "
            + report.eventsRead()
            + " events read, "
            + report.distinctClicks()
            + " distinct clicks");
    outcome.check(
        "reconcile not refused", report.refusal().isEmpty(), report.refusal().orElse("ran"));
    outcome.check("after ./tally reconcile: drift 0", Drift.total(drift) == 0, drift.toString());
    return outcome;
  }
}
