package io.tally.launcher;

import io.tally.event.ClickEventCodec;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.NewTopic;

/**
 * The topics the stack creates. The click topic is also the archive that reconciliation replays, so its
 * retention is long and bounded in both time and bytes, never unbounded by accident.
 */
final class ClickTopics {

  static final String CLICKS = "clicks";
  static final String DEAD_LETTERS = "clicks-dlq";
  static final int CLICK_PARTITIONS = 4;

  /** How long the raw clicks are kept: the window in which reconciliation can recount. */
  static final Duration CLICK_RETENTION = Duration.ofDays(90);
  /** Upper bound on one click partition's size on disk. */
  static final long CLICK_RETENTION_BYTES_PER_PARTITION = 10L * 1024 * 1024 * 1024;
  static final Duration DEAD_LETTER_RETENTION = Duration.ofDays(30);

  private ClickTopics() {}

  static List<NewTopic> all() {
    return List.of(
        new NewTopic(CLICKS, CLICK_PARTITIONS, (short) 1)
            .configs(Map.of(
                "cleanup.policy", "delete",
                "retention.ms", String.valueOf(CLICK_RETENTION.toMillis()),
                "retention.bytes", String.valueOf(CLICK_RETENTION_BYTES_PER_PARTITION),
                "message.timestamp.type", "CreateTime",
                // A click stamped further ahead of the broker's clock is refused on arrival (and counted as
                // dropped by redirect-web): the log holds no record whose validity depends on when it is read.
                "message.timestamp.after.max.ms", String.valueOf(ClickEventCodec.MAX_FUTURE_SKEW.toMillis()))),
        new NewTopic(DEAD_LETTERS, 2, (short) 1)
            .configs(Map.of(
                "cleanup.policy", "delete",
                "retention.ms", String.valueOf(DEAD_LETTER_RETENTION.toMillis()))));
  }
}
