package io.tally.local;

import io.tally.event.ClickEventCodec;
import java.time.Duration;
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
    return List.of(clicks(CLICKS, CLICK_PARTITIONS), deadLetters(DEAD_LETTERS));
  }

  /** A click topic of another name, as a benchmark keeps several data sets side by side. */
  public static NewTopic clicks(String name, int partitions) {
    return new NewTopic(name, partitions, (short) 1)
        .configs(
            Map.of(
                "cleanup.policy", "delete",
                "retention.ms", String.valueOf(CLICK_RETENTION.toMillis()),
                "retention.bytes", String.valueOf(CLICK_RETENTION_BYTES_PER_PARTITION),
                "message.timestamp.type", "CreateTime",
                // A click stamped further ahead of the broker's clock is refused on arrival (and
                // counted as dropped by redirect-web): the log holds no record whose validity
                // depends on when it is read.
                "message.timestamp.after.max.ms",
                    String.valueOf(ClickEventCodec.MAX_FUTURE_SKEW.toMillis())));
  }

  /** A dead-letter topic. */
  public static NewTopic deadLetters(String name) {
    return new NewTopic(name, DEAD_LETTER_PARTITIONS, (short) 1)
        .configs(
            Map.of(
                "cleanup.policy",
                "delete",
                "retention.ms",
                String.valueOf(DEAD_LETTER_RETENTION.toMillis())));
  }
}
