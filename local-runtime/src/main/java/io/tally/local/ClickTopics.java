package io.tally.local;

import io.tally.event.ClickEventCodec;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.NewTopic;

/**
 * The topics a stack creates, with the settings every tool shares. The click topic is also the
 * archive that reconciliation replays, so its retention is long and bounded in both time and bytes,
 * never unbounded by accident.
 */
public final class ClickTopics {

  public static final String CLICKS = "clicks";
  public static final String DEAD_LETTERS = "clicks-dlq";
  public static final int CLICK_PARTITIONS = 4;
  static final int DEAD_LETTER_PARTITIONS = 2;

  /** How long the raw clicks are kept: the window in which reconciliation can recount. */
  static final Duration CLICK_RETENTION = Duration.ofDays(90);

  /** Upper bound on one click partition's size on disk. */
  static final long CLICK_RETENTION_BYTES_PER_PARTITION = 10L * 1024 * 1024 * 1024;

  static final Duration DEAD_LETTER_RETENTION = Duration.ofDays(30);

  private ClickTopics() {}

  /**
   * The click topic and its dead letters, as {@code ./tally up} and the deploy manifests create
   * them.
   */
  public static List<NewTopic> all() {
    return all((short) 1);
  }

  /**
   * The click topic and its dead letters with {@code replicas} copies of each partition; with 3 or
   * more, a write needs 2 of them in sync, so that an acknowledged click survives losing a broker.
   */
  public static List<NewTopic> all(short replicas) {
    return List.of(clicks(CLICKS, CLICK_PARTITIONS, replicas), deadLetters(DEAD_LETTERS, replicas));
  }

  /** A click topic of another name, as a benchmark keeps several data sets side by side. */
  public static NewTopic clicks(String name, int partitions) {
    return clicks(name, partitions, (short) 1);
  }

  /** A click topic of another name with {@code replicas} copies of each partition. */
  public static NewTopic clicks(String name, int partitions, short replicas) {
    return new NewTopic(name, partitions, replicas)
        .configs(
            replicated(
                replicas,
                Map.of(
                    "cleanup.policy", "delete",
                    "retention.ms", String.valueOf(CLICK_RETENTION.toMillis()),
                    "retention.bytes", String.valueOf(CLICK_RETENTION_BYTES_PER_PARTITION),
                    "message.timestamp.type", "CreateTime",
                    // A click stamped further ahead of the broker's clock is refused on arrival,
                    // and counted as dropped by redirect-web: the log holds no record whose
                    // validity depends on when it is read.
                    "message.timestamp.after.max.ms",
                        String.valueOf(ClickEventCodec.MAX_FUTURE_SKEW.toMillis()))));
  }

  /** A dead-letter topic. */
  public static NewTopic deadLetters(String name) {
    return deadLetters(name, (short) 1);
  }

  private static NewTopic deadLetters(String name, short replicas) {
    return new NewTopic(name, DEAD_LETTER_PARTITIONS, replicas)
        .configs(
            replicated(
                replicas,
                Map.of(
                    "cleanup.policy",
                    "delete",
                    "retention.ms",
                    String.valueOf(DEAD_LETTER_RETENTION.toMillis()))));
  }

  /** {@code configs} and, for 3 or more replicas, {@code min.insync.replicas=2}. */
  private static Map<String, String> replicated(short replicas, Map<String, String> configs) {
    if (replicas < 3) {
      return configs;
    }
    Map<String, String> all = new HashMap<>(configs);
    all.put("min.insync.replicas", "2");
    return all;
  }
}
