package io.tally.chaos;

import io.tally.local.ClickJobProcess;
import io.tally.testing.ClickOracle;
import io.tally.testing.ClickStream;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.FutureTask;
import org.apache.kafka.clients.producer.KafkaProducer;

/**
 * Scenario 1: the click job's JVM is killed with SIGKILL several times while a stream with 5%
 * duplicate deliveries flows, and each time started again from its newest retained checkpoint, as a
 * supervisor would. Every table must end equal to the truth: no click lost, none counted twice.
 */
final class JobKillsScenario extends Scenario {

  JobKillsScenario() {
    super(
        "job-kills", "1. job killed hard (SIGKILL) while clicks with 5% duplicates flow: drift 0");
  }

  @Override
  public Outcome run(ChaosStack stack) throws Exception {
    Outcome outcome = new Outcome(name());
    ChaosSettings settings = stack.settings();
    long events = settings.jobKillEvents();
    long from = StreamSender.dataStart(System.currentTimeMillis());
    ClickOracle truth = new ClickOracle();
    ClickStream stream =
        new ClickStream(truth::add, "k", 500, from, 30 * ClickOracle.MINUTE, events, 0.05, 1);
    ClickJobProcess job = stack.startJob();
    KafkaProducer<String, byte[]> producer = stack.producer();
    // Paced so that the kills fall while clicks flow, sent from a thread of their own so that they
    // keep flowing while the job is down; roughly as fast as the job counts on two cores.
    int rate = (int) Math.max(1_000, Math.min(20_000, events / 30));
    FutureTask<Long> sending =
        new FutureTask<>(() -> StreamSender.sendAll(producer, stream, rate, (click, sent) -> {}));
    new Thread(sending, "job-kills-clicks").start();
    long lastKill = 0;
    for (int kill = 1; kill <= settings.kills(); kill++) {
      long due = events * kill / (settings.kills() + 1);
      while (stream.delivered() < due && !sending.isDone()) {
        Thread.sleep(50);
      }
      // A checkpoint first, so that each life of the job has state to lose and to restore.
      job.awaitCheckpoint(Duration.ofSeconds(60));
      job.killHard();
      lastKill = System.nanoTime();
      job.restartFromLatest();
    }
    outcome.clicksSent = sending.get();
    Map<String, Long> drift = stack.awaitTruth(producer, truth);
    if (Drift.total(drift) == 0) {
      outcome.recovery = Duration.ofNanos(System.nanoTime() - lastKill);
    }
    stack.recordLettersAndRestarts(outcome);
    String duplicates = stream.duplicates() + " duplicate deliveries among " + stream.delivered();
    outcome.note(duplicates + "; " + truth.distinct() + " distinct clicks");
    outcome.check(
        settings.kills() + " hard kills", job.kills() == settings.kills(), job.kills() + " kills");
    outcome.checkDrift("drift 0", drift);
    outcome.check("no dead letters", outcome.deadLetters.isEmpty(), outcome.deadLetters.toString());
    return outcome;
  }
}
