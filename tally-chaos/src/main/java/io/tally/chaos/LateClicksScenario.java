package io.tally.chaos;

import io.tally.event.ClickEvent;
import io.tally.local.ClickJobProcess;
import io.tally.local.LocalReconcile;
import io.tally.reconcile.ReconcileReport;
import io.tally.testing.ClickOracle;
import io.tally.testing.ClickStream;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.clients.producer.KafkaProducer;

/**
 * Scenario 6: clicks that arrive later than the allowed lateness are not counted by the streaming
 * job but dead-lettered as late; {@code ./tally reconcile} over their day (batch-reconcile's job,
 * run here in process) then recounts the click log and every table equals the truth, late clicks
 * included.
 */
final class LateClicksScenario implements Scenario {

  static final int LATE_CLICKS = 60;

  @Override
  public String name() {
    return "late";
  }

  @Override
  public String title() {
    return "6. clicks later than the lateness: in the DLQ, then recovered by reconcile (drift 0)";
  }

  @Override
  public Outcome run(ChaosStack stack) throws Exception {
    Outcome outcome = new Outcome(name());
    long from = StreamSender.dataStart(System.currentTimeMillis());
    long span = 20 * ClickOracle.MINUTE;
    long events = stack.settings().validEvents();
    ClickOracle onTime = new ClickOracle();
    ClickOracle all = new ClickOracle();
    ClickStream stream = new ClickStream(onTime::add, "l", 50, from, span, events, 0.05, 6);
    ClickJobProcess job = stack.job();
    job.start(Optional.empty());
    KafkaProducer<String, byte[]> producer = stack.producer();
    List<ClickEvent> sent = new ArrayList<>();
    while (stream.hasNext()) {
      ClickEvent click = stream.next();
      StreamSender.send(producer, click);
      if (all.add(click)) {
        sent.add(click);
      }
    }
    producer.flush();
    // The job's event time must be well past minutes 1-3 plus the 5-minute lateness before they
    // come again.
    long past = from + 12 * ClickOracle.MINUTE;
    boolean progressed = ChaosStack.await(() -> progress(stack) >= past, stack.settings().settle());
    outcome.check(
        "the job's event time passed the late clicks' minutes + lateness",
        progressed,
        "closed before " + Instant.ofEpochMilli(progress(stack)));
    ClickStream late = new ClickStream(click -> {}, "l", 50, from, span, 1, 0, 66);
    for (int i = 0; i < LATE_CLICKS; i++) {
      ClickEvent click =
          late.click(from + ClickOracle.MINUTE + i * 2 * ClickOracle.MINUTE / LATE_CLICKS);
      all.add(click);
      StreamSender.send(producer, click);
    }
    producer.flush();
    stack.pushWatermarks(producer);
    outcome.clicksSent = stream.delivered() + LATE_CLICKS;

    Map<String, Long> streamDrift = stack.awaitDriftZero(onTime, stack.settings().settle());
    outcome.check(
        "the streaming job counted every on-time click and no late one",
        Drift.total(streamDrift) == 0,
        "drift against the on-time clicks " + streamDrift);
    boolean dlq =
        ChaosStack.await(
            () -> stack.deadLetters().byReason().getOrDefault("late", 0L) >= LATE_CLICKS,
            Duration.ofSeconds(30));
    DeadLetters letters = stack.deadLetters();
    outcome.deadLetters.putAll(letters.byReason());
    outcome.check(
        LATE_CLICKS + " late clicks in the DLQ as late",
        dlq,
        letters.byReason().getOrDefault("late", 0L) + " late letters");
    outcome.note("drift before reconcile (the late clicks): " + Drift.total(stack.drift(all)));

    long start = System.nanoTime();
    // The operator reconciles the whole UTC day of the late clicks: only periods wholly inside the
    // range are recounted, so a range of the data's minutes alone would repair the minutes but not
    // their hour and day.
    long day = ClickOracle.floor(from, ClickOracle.DAY);
    ReconcileReport report = reconcile(stack, day, day + ClickOracle.DAY);
    Map<String, Long> drift = stack.awaitDriftZero(all, Duration.ofSeconds(10));
    outcome.recovery = Duration.ofNanos(System.nanoTime() - start);
    outcome.drift = drift;
    outcome.restarts = job.restarts();
    outcome.note(
        "reconcile: "
            + report.eventsRead()
            + " events read, "
            + report.distinctClicks()
            + " distinct clicks");
    outcome.check("after ./tally reconcile: drift 0", Drift.total(drift) == 0, drift.toString());
    return outcome;
  }

  /** Where the job's event time has got, 0 while PostgreSQL does not answer. */
  static long progress(ChaosStack stack) {
    try {
      return stack.streamProgress();
    } catch (java.sql.SQLException e) {
      return 0;
    }
  }

  /** What {@code ./tally reconcile --from --to} does, on a MiniCluster of its own in this JVM. */
  static ReconcileReport reconcile(ChaosStack stack, long from, long to) throws Exception {
    return LocalReconcile.run(
        LocalReconcile.options(
            stack.services(),
            ChaosStack.CLICKS,
            Instant.ofEpochMilli(from),
            Instant.ofEpochMilli(to),
            2),
        stack.services().dir().resolve("reconcile-tmp"));
  }
}
