package io.tally.chaos;

import io.tally.event.ClickEvent;
import io.tally.testing.ClickOracle;
import io.tally.testing.ClickStream;
import org.apache.kafka.clients.producer.KafkaProducer;

/**
 * Scenario 8: three redirect-web hosts write the same traffic, one with a right clock, one 15
 * minutes fast, one 15 minutes slow: every click is stamped by its host, and counts at that time.
 * The streaming job cannot count what the slow host stamped after the fast host moved event time on
 * (late data, in the dead-letter topic); {@code ./tally reconcile} over the days of the data then
 * reads every record, whatever any host's clock says, and every table equals the truth.
 */
final class SkewedClocksScenario extends Scenario {

  static final long SKEW = 15 * ClickOracle.MINUTE;

  SkewedClocksScenario() {
    super(
        "skewed-clocks",
        "8. hosts 15 minutes fast and slow: the stream counts what is on time, reconcile the"
            + " rest (drift 0)");
  }

  @Override
  public Outcome run(ChaosStack stack) throws Exception {
    Outcome outcome = new Outcome(name());
    long from = StreamSender.dataStart(System.currentTimeMillis());
    long span = 30 * ClickOracle.MINUTE;
    long events = stack.settings().validEvents();
    ClickOracle truth = new ClickOracle();
    ClickStream traffic = new ClickStream(click -> {}, "k", 50, from, span, events, 0, 8);
    stack.startJob();
    KafkaProducer<String, byte[]> producer = stack.producer();
    long[] skews = {0, SKEW, -SKEW};
    for (long i = 0; i < events; i++) {
      long happened = from + i * span / events;
      ClickEvent click = traffic.click(happened + skews[(int) (i % skews.length)]);
      truth.add(click);
      StreamSender.send(producer, click);
    }
    stack.pushWatermarks(producer);
    outcome.clicksSent = events;
    // Every minute of the data closed in the stream (the watermark clicks are stamped now) before
    // the recount judges them: a minute still open for the stream is left alone by reconcile.
    long dataEnd = from + span + SKEW + ClickOracle.MINUTE;
    LateClicksScenario.checkEventTimePassed(
        stack, outcome, "the stream's event time passed the data", dataEnd);
    LateClicksScenario.checkLateLetters(
        stack, outcome, "the slow host's clicks reached the stream late", 1);
    long firstDay = ClickOracle.floor(from - SKEW, ClickOracle.DAY);
    long lastDay = ClickOracle.floor(from + span + SKEW, ClickOracle.DAY);
    LateClicksScenario.reconcileToTruth(stack, outcome, truth, firstDay, lastDay + ClickOracle.DAY);
    return outcome;
  }
}
