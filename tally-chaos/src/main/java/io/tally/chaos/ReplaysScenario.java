package io.tally.chaos;

import io.tally.event.ClickEvent;
import io.tally.launcher.Checkpoints;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.apache.kafka.clients.producer.KafkaProducer;

/**
 * Scenario 4: replays. A second producer delivers 5% of the clicks again (a retry after a lost
 * acknowledgement, from another instance), and the operator rewinds the job: stops it and restarts it
 * from its oldest retained checkpoint rather than its newest, so that the job reads again, from that
 * checkpoint's Kafka offsets, clicks whose counts it has already written. Every table must end equal to
 * the truth.
 */
final class ReplaysScenario implements Scenario {

  @Override
  public String name() {
    return "replays";
  }

  @Override
  public String title() {
    return "4. replays: producer retries and a rewind to an older checkpoint's offsets: drift 0";
  }

  @Override
  public Outcome run(ChaosStack stack) throws Exception {
    Outcome outcome = new Outcome(name());
    ChaosSettings settings = stack.settings();
    long events = settings.replayEvents();
    ClickStream stream = new ClickStream(new ClickTruth(), "r", 200, Streams.dataStart(System.currentTimeMillis()),
        20 * ClickTruth.MINUTE, events, 0.0, 4);
    JobProcess job = stack.job();
    job.start(Optional.empty());
    KafkaProducer<String, byte[]> producer = stack.producer();
    KafkaProducer<String, byte[]> retrier = stack.producer();
    SplittableRandom random = new SplittableRandom(44);
    long retries = 0;
    long rewoundFrom = 0;
    long half = events / 2;
    Optional<Path> rewindTo = Optional.empty();
    Optional<Path> newest = Optional.empty();
    int rate = (int) Math.max(2_000, Math.min(20_000, events / 20));
    long start = System.nanoTime();
    while (stream.hasNext()) {
      ClickEvent click = stream.next();
      Streams.send(producer, click);
      if (random.nextInt(100) < 5) {
        Streams.send(retrier, click);
        retries++;
      }
      long sent = stream.delivered();
      if (sent % 100 == 0) {
        long wait = start + sent * 1_000_000_000L / rate - System.nanoTime();
        if (wait > 0) {
          Thread.sleep(wait / 1_000_000);
        }
      }
      if (sent == half) {
        // Three checkpoints retained; the oldest is the rewind point.
        producer.flush();
        for (int i = 0; i < 3; i++) {
          job.awaitCheckpoint(Duration.ofSeconds(60));
        }
        rewindTo = oldest(job.checkpoints());
        newest = Checkpoints.latest(job.checkpoints());
        job.killHard();
        rewoundFrom = sent;
        job.start(rewindTo);
      }
    }
    producer.flush();
    retrier.flush();
    stack.pushWatermarks(producer);
    outcome.clicksSent = stream.delivered() + retries;
    Map<String, Long> drift = stack.awaitDriftZero(stream.truth(), settings.settle());
    outcome.drift = drift;
    outcome.deadLetters.putAll(stack.deadLetters().byReason());
    outcome.restarts = job.restarts();
    outcome.note(retries + " clicks delivered again by a second producer; job rewound at click " + rewoundFrom
        + " to " + rewindTo.map(p -> p.getFileName().toString()).orElse("no checkpoint"));
    outcome.check("rewound to an older retained checkpoint than the newest", rewindTo.isPresent() && !rewindTo.equals(newest),
        rewindTo.map(p -> p.getFileName().toString()).orElse("none") + " instead of "
            + newest.map(p -> p.getFileName().toString()).orElse("none"));
    outcome.check("drift 0", Drift.total(drift) == 0, drift.toString());
    return outcome;
  }

  /** The oldest complete checkpoint under {@code root}. */
  static Optional<Path> oldest(Path root) throws IOException {
    try (Stream<Path> files = Files.find(root, 3, (p, attrs) -> p.getFileName().toString().equals("_metadata"))) {
      return files.map(Path::getParent)
          .filter(dir -> dir.getFileName().toString().startsWith("chk-"))
          .min(Comparator.comparingLong(dir -> Long.parseLong(dir.getFileName().toString().substring(4))));
    }
  }
}
