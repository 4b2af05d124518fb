package io.tally.chaos;

import io.tally.event.ClickEvent;
import io.tally.local.ClickJobProcess;
import io.tally.reconcile.AggregateTable;
import io.tally.reconcile.ReconcileReport;
import io.tally.testing.ClickEvents;
import io.tally.testing.ClickOracle;
import io.tally.testing.ClickStream;
import io.tally.testing.Clients;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.apache.kafka.clients.producer.KafkaProducer;

/**
 * Scenario 12: the job's life. Steady clicks with 5% duplicates on many links and a flood of
 * made-up referrer hosts on one, sent in five parts with an event of a deployment's life between
 * each: the job killed hard and restarted from its latest checkpoint; stopped with a savepoint and
 * resumed after a stop longer than its state lives (click ids, visitor marks and stored periods are
 * kept {@value #STATE_TTL_SECONDS} s of running time here, through the same code as the two days of
 * production); stopped with a savepoint and resumed on one subtask instead of two; stopped and
 * upgraded without state to a release that counts one browser's agent as a crawler ({@code
 * --crawler-agents}). Passes when every table equals the truth as the new release judges the clicks
 * of the day it recounted (a flooded group as the job keeps it: the values of least rank and {@code
 * (other)}) without reconcile, and a reconcile run with the same rule then finds nothing to repair.
 * The truth takes the recounted day to be the last click's; started within minutes of midnight UTC,
 * the job may recount from the day before, and the scenario then shows drift there.
 */
final class LifecycleScenario extends Scenario {

  /** Longer than the scenario runs, stops left out, so that only a stop could outlast it. */
  static final int STATE_TTL_SECONDS = 180;

  private static final String FLOODED = "lifecycle-flood";

  /** What the upgrade counts as a crawler: Samsung Internet's agent, a person's until then. */
  private static final String CRAWLER_AGENT = "samsungbrowser";

  LifecycleScenario() {
    super(
        "lifecycle",
        "12. a kill, a stop longer than the state lives, a rescale and a stateless upgrade with"
            + " a changed classifier under a referrer flood: drift 0 without reconcile");
  }

  @Override
  public Outcome run(ChaosStack stack) throws Exception {
    Outcome outcome = new Outcome(name());
    long events = stack.settings().replayEvents();
    long from = StreamSender.dataStart(System.currentTimeMillis());
    List<ClickEvent> clicks = new ArrayList<>();
    ClickStream stream =
        new ClickStream(clicks::add, "lc", 200, from, 20 * ClickOracle.MINUTE, events, 0.05, 12);
    List<String> ttl =
        List.of("--dedup-ttl", STATE_TTL_SECONDS + "s", "--state-ttl", STATE_TTL_SECONDS + "s");
    ClickJobProcess job = stack.newJob("job", 2, ttl);
    job.start(Optional.empty());
    KafkaProducer<String, byte[]> producer = stack.producer();
    Flood flood = new Flood(clicks);

    send(producer, stream, flood, events / 5);
    job.awaitCheckpoint(Duration.ofSeconds(60));
    job.killHard();
    job.restartFromLatest();

    send(producer, stream, flood, events * 2 / 5);
    Path savepoint = job.stopWithSavepoint();
    Duration stopped = Duration.ofSeconds(STATE_TTL_SECONDS + 10);
    Thread.sleep(stopped.toMillis());
    job.start(Optional.of(savepoint));

    send(producer, stream, flood, events * 3 / 5);
    Path beforeRescale = job.stopWithSavepoint();
    ClickJobProcess rescaled = stack.newJob("job-one-subtask", 1, ttl);
    rescaled.start(Optional.of(beforeRescale));

    send(producer, stream, flood, events * 4 / 5);
    rescaled.stopWithSavepoint();
    long recountedFrom = ClickOracle.floor(clicks.get(clicks.size() - 1).ts(), ClickOracle.DAY);
    List<String> upgrade = new ArrayList<>(ttl);
    upgrade.addAll(List.of("--crawler-agents", CRAWLER_AGENT));
    ClickJobProcess upgraded = stack.newJob("job-upgraded", 2, upgrade);
    upgraded.start(Optional.empty());

    send(producer, stream, flood, events);
    // The upgrade recounted the day of the clicks open at its start with its rule, and counts on
    // with
    // it; the days before keep the rule they were counted with.
    ClickOracle truth = new ClickOracle();
    long judgedOtherwise = 0;
    for (ClickEvent click : clicks) {
      ClickOracle.Facts facts =
          click.ts() >= recountedFrom
              ? Clients.facts(click, List.of(CRAWLER_AGENT))
              : Clients.facts(click);
      if (!facts.equals(Clients.facts(click))) {
        judgedOtherwise++;
      }
      truth.add(click, facts);
    }
    outcome.clicksSent = stream.delivered() + flood.sent;
    outcome.note(
        "killed at a fifth, stopped for "
            + stopped.toSeconds()
            + " s at two fifths (state TTL "
            + STATE_TTL_SECONDS
            + " s), rescaled 2 -> 1 at three, upgraded without state to count "
            + CRAWLER_AGENT
            + " agents as crawlers at four ("
            + judgedOtherwise
            + " clicks of people now crawlers); "
            + flood.sent
            + " flood clicks, each from a referrer of its own");
    outcome.checkDrift("drift 0 without reconcile", stack.awaitTruth(producer, truth));
    outcome.deadLetters.putAll(stack.deadLetters().byReason());
    outcome.restarts = job.restarts() + rescaled.restarts() + upgraded.restarts();

    ReconcileReport report =
        LateClicksScenario.reconcile(
            stack,
            recountedFrom,
            recountedFrom + ClickOracle.DAY,
            "--crawler-agents",
            CRAWLER_AGENT);
    long repaired = report.minutesDiffering();
    for (AggregateTable table : AggregateTable.values()) {
      repaired += report.aggregateRowsChanged(table);
    }
    outcome.check(
        "then reconcile changes nothing",
        repaired == 0 && report.refusal().isEmpty(),
        repaired + " rows repaired of " + report.minutesChecked() + " minutes checked");
    Map<String, Long> after = stack.drift(truth);
    outcome.checkDrift("drift 0 after reconcile", after);
    return outcome;
  }

  /** Sends the stream up to {@code total} deliveries, one flood click after every tenth. */
  private static void send(
      KafkaProducer<String, byte[]> producer, ClickStream stream, Flood flood, long total)
      throws InterruptedException {
    int rate = (int) Math.max(2_000, Math.min(10_000, total / 10));
    long start = System.nanoTime();
    long sentBefore = stream.delivered();
    while (stream.hasNext() && stream.delivered() < total) {
      ClickEvent click = stream.next();
      StreamSender.send(producer, click);
      if (stream.delivered() % 10 == 0) {
        StreamSender.send(producer, flood.next(click.ts()));
      }
      StreamSender.pace(start, stream.delivered() - sentBefore, rate);
    }
    producer.flush();
  }

  /** People's clicks on one link, each from a referrer host never seen before. */
  private static final class Flood {
    private final List<ClickEvent> clicks;
    private long sent;

    Flood(List<ClickEvent> clicks) {
      this.clicks = clicks;
    }

    ClickEvent next(long ts) {
      ClickEvent click =
          ClickEvent.builder(UUID.randomUUID(), FLOODED, ts)
              .visitor(ClickEvents.visitor("flood-" + sent % 1_000))
              .userAgent(ClickEvents.DESKTOP_BROWSER)
              .referrerDomain("r" + sent++ + ".spam.example")
              .country("DE")
              .build();
      clicks.add(click);
      return click;
    }
  }
}
