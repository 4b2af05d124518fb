package io.tally.chaos;

import io.tally.event.ClickEvent;
import io.tally.local.Checkpoints;
import io.tally.local.ClickJobProcess;
import io.tally.testing.ClickOracle;
import io.tally.testing.ClickStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.TopicPartition;

/**
 * Scenario 4: replays. A second producer delivers 5% of the clicks again (a retry after a lost
 * acknowledgement, from another instance), and the operator rewinds the job twice. Halfway it stops
 * the job and restarts it from its oldest retained checkpoint rather than its newest, so that the
 * job reads again, from that checkpoint's Kafka offsets, clicks whose counts it has already
 * written. At three quarters it kills the job, moves the consumer group's committed offsets back to
 * the first quarter's clicks and starts the job without any state, as after lost checkpoints: the
 * job must read again from the start of the open day and recount it whole. Every table must end
 * equal to the truth.
 */
final class ReplaysScenario extends Scenario {

  /**
   * The click job's consumer group, as {@link ChaosStack#jobArgs()} leaves it (the job's default).
   */
  private static final String GROUP = "flink-click-job";

  ReplaysScenario() {
    super(
        "replays",
        "4. replays: producer retries, a rewind to an older checkpoint, a consumer-offset rewind"
            + " without state: drift 0");
  }

  @Override
  public Outcome run(ChaosStack stack) throws Exception {
    Outcome outcome = new Outcome(name());
    long events = stack.settings().replayEvents();
    long from = StreamSender.dataStart(System.currentTimeMillis());
    ClickOracle truth = new ClickOracle();
    ClickStream stream =
        new ClickStream(truth::add, "r", 200, from, 20 * ClickOracle.MINUTE, events, 0.0, 4);
    ClickJobProcess job = stack.startJob();
    KafkaProducer<String, byte[]> producer = stack.producer();
    KafkaProducer<String, byte[]> retrier = stack.producer();
    SplittableRandom random = new SplittableRandom(44);
    long retries = 0;
    long half = events / 2;
    Optional<Path> rewindTo = Optional.empty();
    Optional<Path> newest = Optional.empty();
    long quarterTime = 0;
    Map<TopicPartition, long[]> offsetsMoved = Map.of();
    int rate = (int) Math.max(2_000, Math.min(20_000, events / 20));
    long start = System.nanoTime();
    while (stream.hasNext()) {
      ClickEvent click = stream.next();
      StreamSender.send(producer, click);
      if (random.nextInt(100) < 5) {
        StreamSender.send(retrier, click);
        retries++;
      }
      long sent = stream.delivered();
      StreamSender.pace(start, sent, rate);
      if (sent == events / 4) {
        quarterTime = click.ts();
      }
      if (sent == half) {
        // Three checkpoints retained; the oldest is the rewind point.
        producer.flush();
        for (int i = 0; i < 3; i++) {
          job.awaitCheckpoint(Duration.ofSeconds(60));
        }
        // Chosen after the kill: while the job runs, each new checkpoint deletes the oldest
        // retained one, and a rewind point picked a moment earlier was gone by the restart (seen on
        // a loaded machine).
        job.killHard();
        rewindTo = oldest(job.checkpoints());
        newest = Checkpoints.latest(job.checkpoints());
        job.start(rewindTo);
      }
      if (sent == events * 3 / 4) {
        producer.flush();
        job.awaitCheckpoint(Duration.ofSeconds(60));
        job.killHard();
        offsetsMoved = rewindConsumerGroup(stack, quarterTime);
        job.start(Optional.empty());
      }
    }
    producer.flush();
    retrier.flush();
    outcome.clicksSent = stream.delivered() + retries;
    String rewind = "job rewound at click " + half + " to " + name(rewindTo, "no checkpoint");
    outcome.note(retries + " clicks delivered again by a second producer; " + rewind);
    outcome.check(
        "rewound to an older retained checkpoint than the newest",
        rewindTo.isPresent() && !rewindTo.equals(newest),
        name(rewindTo, "none") + " instead of " + name(newest, "none"));
    // Committed offsets trail the checkpoints (Flink commits them after a checkpoint completes, and
    // it does not need them), so the reset may move some forward: the start without state must not
    // care.
    long before = offsetsMoved.values().stream().mapToLong(o -> o[0]).sum();
    long after = offsetsMoved.values().stream().mapToLong(o -> o[1]).sum();
    String partitions = "committed offsets summed over " + offsetsMoved.size() + " partitions: ";
    outcome.check(
        "consumer offsets reset to the first quarter's time, then a start without state",
        offsetsMoved.values().stream().anyMatch(o -> o[0] != o[1]),
        partitions + before + " -> " + after);
    outcome.checkDrift("drift 0", stack.awaitTruth(producer, truth));
    stack.recordLettersAndRestarts(outcome);
    return outcome;
  }

  /**
   * Sets the click job's committed offsets to the first record at or after {@code time} in each
   * partition, as an operator would with {@code kafka-consumer-groups --reset-offsets
   * --to-datetime}; returns per partition the committed offset before and after.
   */
  private static Map<TopicPartition, long[]> rewindConsumerGroup(ChaosStack stack, long time)
      throws Exception {
    try (Admin admin =
        Admin.create(
            Map.<String, Object>of(
                AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, stack.services().bootstrapServers()))) {
      Map<TopicPartition, OffsetAndMetadata> committed =
          admin.listConsumerGroupOffsets(GROUP).partitionsToOffsetAndMetadata().get();
      Map<TopicPartition, OffsetSpec> atTime = new HashMap<>();
      committed.keySet().forEach(tp -> atTime.put(tp, OffsetSpec.forTimestamp(time)));
      Map<TopicPartition, OffsetAndMetadata> rewound = new HashMap<>();
      Map<TopicPartition, long[]> moved = new HashMap<>();
      for (var found : admin.listOffsets(atTime).all().get().entrySet()) {
        long current = committed.get(found.getKey()).offset();
        long target = found.getValue().offset() < 0 ? current : found.getValue().offset();
        rewound.put(found.getKey(), new OffsetAndMetadata(target));
        moved.put(found.getKey(), new long[] {current, target});
      }
      admin.alterConsumerGroupOffsets(GROUP, rewound).all().get();
      return moved;
    }
  }

  private static String name(Optional<Path> checkpoint, String none) {
    return checkpoint.map(p -> p.getFileName().toString()).orElse(none);
  }

  /** The oldest complete checkpoint under {@code root}. */
  static Optional<Path> oldest(Path root) throws IOException {
    try (Stream<Path> files =
        Files.find(root, 3, (p, attrs) -> p.getFileName().toString().equals("_metadata"))) {
      return files
          .map(Path::getParent)
          .filter(dir -> dir.getFileName().toString().startsWith("chk-"))
          .min(
              Comparator.comparingLong(
                  dir -> Long.parseLong(dir.getFileName().toString().substring(4))));
    }
  }
}
