package io.tally.chaos;

import io.tally.chaos.PoisonRecords.Poison;
import io.tally.event.ClickEventCodec;
import io.tally.local.ClickJobProcess;
import io.tally.testing.ClickOracle;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * Scenario 5: every kind of poison record ({@link PoisonRecords}) spread through a stream of valid
 * clicks. Each must land in the dead-letter topic with its reason and its bytes intact, the job
 * must not restart, and the valid clicks must be counted exactly.
 */
final class PoisonScenario implements Scenario {

  @Override
  public String name() {
    return "poison";
  }

  @Override
  public String title() {
    return "5. poison records: each in the DLQ with its reason, 0 restarts, valid clicks exact";
  }

  @Override
  public Outcome run(ChaosStack stack) throws Exception {
    Outcome outcome = new Outcome(name());
    long now = System.currentTimeMillis();
    long from = Streams.dataStart(now);
    long events = stack.settings().validEvents();
    ClickStream stream =
        new ClickStream(
            ClickStream.newTruth(), "p", 50, from, 10 * ClickOracle.MINUTE, events, 0.05, 5);
    List<Poison> poisons = PoisonRecords.all(from + 5 * ClickOracle.MINUTE, now);
    ClickJobProcess job = stack.job();
    job.start(java.util.Optional.empty());

    KafkaProducer<String, byte[]> producer = stack.producer();
    List<Poison> left = new ArrayList<>(poisons);
    Streams.sendAll(
        producer,
        stream,
        events,
        0,
        poisons.size() + 1,
        sent -> {
          if (!left.isEmpty()) {
            Poison p = left.remove(0);
            producer.send(
                new ProducerRecord<>(
                    ChaosStack.CLICKS,
                    null,
                    from + sent * 10 * ClickOracle.MINUTE / events,
                    "poison",
                    p.value()));
          }
        });
    for (Poison p : left) {
      producer.send(new ProducerRecord<>(ChaosStack.CLICKS, null, from, "poison", p.value()));
    }
    producer.flush();
    stack.pushWatermarks(producer);
    outcome.clicksSent = stream.delivered() + poisons.size();

    Map<String, Long> drift = stack.awaitDriftZero(stream.truth(), stack.settings().settle());
    outcome.drift = drift;
    DeadLetters letters = awaitLetters(stack, poisons.size());
    outcome.deadLetters.putAll(letters.byReason());
    List<String> wrong = new ArrayList<>();
    for (Poison p : poisons) {
      // An oversized record's letter keeps only its first bytes; its source offset leads to the
      // rest.
      byte[] kept =
          p.value() == null
              ? null
              : Arrays.copyOf(
                  p.value(), Math.min(p.value().length, ClickEventCodec.MAX_EVENT_BYTES));
      List<String> reasons =
          letters.reasonsOf(kept == null ? null : Base64.getEncoder().encodeToString(kept));
      if (reasons.isEmpty() || !reasons.stream().allMatch(r -> r.equals(p.reason().label()))) {
        wrong.add(
            p.kind()
                + " → "
                + (reasons.isEmpty() ? "not in the DLQ" : reasons)
                + ", expected "
                + p.reason().label());
      }
    }
    outcome.restarts = job.restarts();
    outcome.check(
        poisons.size() + " poison kinds each in the DLQ with its reason",
        wrong.isEmpty(),
        (poisons.size() - wrong.size())
            + "/"
            + poisons.size()
            + (wrong.isEmpty() ? "" : "; " + String.join("; ", wrong)));
    outcome.check("0 job restarts", outcome.restarts == 0, outcome.restarts + " restarts");
    outcome.check("valid clicks exact (drift 0)", Drift.total(drift) == 0, drift.toString());
    return outcome;
  }

  private static DeadLetters awaitLetters(ChaosStack stack, int expected)
      throws InterruptedException {
    DeadLetters[] letters = {stack.deadLetters()};
    ChaosStack.await(
        () -> {
          letters[0] = stack.deadLetters();
          return letters[0].all().size() >= expected;
        },
        java.time.Duration.ofSeconds(30));
    return letters[0];
  }
}
