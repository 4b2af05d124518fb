package io.tally.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.clients.consumer.OffsetResetStrategy;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/**
 * Tests for {@link ReconcileJob.FromTimestampElseEarliest}: starts where the timestamp says and,
 * when retention deletes that offset before it is read, goes on from the earliest record instead of
 * the end.
 */
class FromTimestampElseEarliestTest {

  private static final TopicPartition FOUND = new TopicPartition("clicks", 0);
  private static final TopicPartition ALL_OLDER = new TopicPartition("clicks", 1);

  @Test
  void startsAtTheFirstRecordAtOrAfterTheTimestampOrAtTheEndWhenThereIsNone() {
    Map<TopicPartition, Long> offsets =
        new ReconcileJob.FromTimestampElseEarliest(1_000)
            .getPartitionOffsets(List.of(FOUND, ALL_OLDER), new Log());

    assertThat(offsets).containsEntry(FOUND, 42L).containsEntry(ALL_OLDER, 900L);
  }

  @Test
  void aStartRetentionDeletedBeforeItWasReadResetsToTheEarliestRecord() {
    assertThat(new ReconcileJob.FromTimestampElseEarliest(1_000).getAutoOffsetResetStrategy())
        .isEqualTo(OffsetResetStrategy.EARLIEST);
  }

  /**
   * A log in which partition 0 has a record at 1000 ms at offset 42 and partition 1 only older
   * ones.
   */
  private static final class Log implements OffsetsInitializer.PartitionOffsetsRetriever {
    @Override
    public Map<TopicPartition, Long> committedOffsets(Collection<TopicPartition> partitions) {
      return Map.of();
    }

    @Override
    public Map<TopicPartition, Long> endOffsets(Collection<TopicPartition> partitions) {
      return partitions.stream().collect(Collectors.toMap(tp -> tp, tp -> 900L));
    }

    @Override
    public Map<TopicPartition, Long> beginningOffsets(Collection<TopicPartition> partitions) {
      return partitions.stream().collect(Collectors.toMap(tp -> tp, tp -> 0L));
    }

    @Override
    public Map<TopicPartition, OffsetAndTimestamp> offsetsForTimes(
        Map<TopicPartition, Long> timestamps) {
      return timestamps.containsKey(FOUND)
          ? Map.of(FOUND, new OffsetAndTimestamp(42, 1_000))
          : Map.of();
    }
  }
}
