package io.tally.chaos;

import io.tally.event.ClickEvent;
import io.tally.local.LocalReconcile;
import io.tally.reconcile.ReconcileReport;
import io.tally.testing.ClickOracle;
import io.tally.testing.ClickStream;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.apache.kafka.clients.producer.KafkaProducer;

/**
 * Scenario 6: clicks that arrive later than the allowed lateness are not counted by the streaming
 * job but dead-lettered as late; {@code ./tally reconcile} over their day (batch-reconcile's job,
 * run here in process) then recounts the click log and every table equals the truth, late clicks
 * included.
 */
final class LateClicksScenario extends Scenario {

  static final int LATE_CLICKS = 60;

  LateClicksScenario() {
    super(
        "late",
        "6. clicks later than the lateness: in the DLQ, then recovered by reconcile (drift 0)");
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
    stack.startJob();
    KafkaProducer<String, byte[]> producer = stack.producer();
    StreamSender.sendAll(producer, stream, 0, (click, sent) -> all.add(click));
    // The job's event time must be well past minutes 1-3 plus the 5-minute lateness before they
    // come again.
    checkEventTimePassed(
        stack,
        outcome,
        "the job's event time passed the late clicks' minutes + lateness",
        from + 12 * ClickOracle.MINUTE);
    ClickStream late = new ClickStream(click -> {}, "l", 50, from, span, 1, 0, 66);
    for (int i = 0; i < LATE_CLICKS; i++) {
      ClickEvent click =
          late.click(from + ClickOracle.MINUTE + i * 2 * ClickOracle.MINUTE / LATE_CLICKS);
      all.add(click);
      StreamSender.send(producer, click);
    }
    outcome.clicksSent = stream.delivered() + LATE_CLICKS;
    Map<String, Long> streamDrift = stack.awaitTruth(producer, onTime);
    outcome.check(
        "the streaming job counted every on-time click and no late one",
        Drift.total(streamDrift) == 0,
        "drift against the on-time clicks " + streamDrift);
    checkLateLetters(stack, outcome, LATE_CLICKS + " late clicks in the DLQ as late", LATE_CLICKS);
    // The operator reconciles the whole UTC day of the late clicks: only periods wholly inside the
    // range are recounted, so a range of the data's minutes alone would repair the minutes but not
    // their hour and day.
    long day = ClickOracle.floor(from, ClickOracle.DAY);
    reconcileToTruth(stack, outcome, all, day, day + ClickOracle.DAY);
    return outcome;
  }

  /**
   * Checks under {@code claim} that the job's event time passes {@code time} within the settle
   * time.
   */
  static void checkEventTimePassed(ChaosStack stack, Outcome outcome, String claim, long time)
      throws Exception {
    boolean passed =
        ChaosStack.await(() -> stack.streamProgress() >= time, stack.settings().settle());
    outcome.check(claim, passed, "closed before " + Instant.ofEpochMilli(stack.streamProgress()));
  }

  /** Checks under {@code claim} that {@code expected} late letters arrive within 30 s. */
  static void checkLateLetters(ChaosStack stack, Outcome outcome, String claim, long expected)
      throws Exception {
    DeadLetters letters =
        stack.awaitDeadLetters(l -> l.byReason().getOrDefault("late", 0L) >= expected);
    outcome.deadLetters.putAll(letters.byReason());
    long late = outcome.deadLetters.getOrDefault("late", 0L);
    outcome.check(claim, late >= expected, late + " late letters");
  }

  /**
   * The end of the scenarios reconcile repairs: {@code ./tally reconcile} from {@code from} to
   * {@code to}, then the check that every table equals {@code truth}; the recovery is the time both
   * took.
   */
  static void reconcileToTruth(
      ChaosStack stack, Outcome outcome, ClickOracle truth, long from, long to) throws Exception {
    outcome.note("drift before reconcile (the late clicks): " + Drift.total(stack.drift(truth)));
    long start = System.nanoTime();
    ReconcileReport report = reconcile(stack, from, to);
    Map<String, Long> drift = stack.awaitDriftZero(truth, Duration.ofSeconds(10));
    outcome.recovery = Duration.ofNanos(System.nanoTime() - start);
    outcome.restarts = stack.job().restarts();
    String eventsRead = "reconcile: " + report.eventsRead() + " events read, ";
    outcome.note(eventsRead + report.distinctClicks() + " distinct clicks");
    outcome.check(
        "reconcile not refused", report.refusal().isEmpty(), report.refusal().orElse("ran"));
    outcome.checkDrift("after ./tally reconcile: drift 0", drift);
  }

  /** What {@code ./tally reconcile --from --to} does, on a MiniCluster of its own in this JVM. */
  static ReconcileReport reconcile(ChaosStack stack, long from, long to, String... more)
      throws Exception {
    return LocalReconcile.run(
        LocalReconcile.options(
            stack.services(),
            ChaosStack.CLICKS,
            Instant.ofEpochMilli(from),
            Instant.ofEpochMilli(to),
            2,
            more),
        stack.services().dir().resolve("reconcile-tmp"));
  }
}
