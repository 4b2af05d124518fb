package io.tally.clickjob.io;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.counting.periods.Recount;
import io.tally.event.ClickEventCodec;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer.PartitionOffsetsRetriever;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/** Tests for {@link RewindToOpenDay}, on a topic held in memory: one timestamp per offset. */
class RewindToOpenDayTest {

  private static final TopicPartition P0 = new TopicPartition("clicks", 0);
  private static final TopicPartition P1 = new TopicPartition("clicks", 1);

  /** With a minute, a look-back of 8 minutes. */
  private static final Duration OUT_OF_ORDERNESS = Duration.ofMinutes(1);

  private static final Duration ALLOWED_LATENESS = Duration.ofMinutes(6);
  private static final long DAY_START = Instant.parse("2026-11-29T00:00:00Z").toEpochMilli();
  private static final long MINUTE = 60_000;
  private static final long NOW = DAY_START + 20 * 60 * MINUTE;

  private final Map<TopicPartition, TreeMap<Long, Long>> topic = new HashMap<>();
  private final Map<TopicPartition, Long> committed = new HashMap<>();

  @Test
  void startsAtTheStartOfTheDayOfTheOldestOpenWindowInEveryPartition() {
    // P0 read up to 10:00, P1 up to 09:58: the job's watermark was at most 09:58, so minutes from
    // 09:50 on may have been open; their day started at 00:00. A record of 23:50 the day before
    // may hold a click stamped ahead of it, in the day: read again, but not one of 22:50.
    records(
        P0,
        100,
        at(-70, 0),
        at(-10, -1),
        at(0, 0),
        at(0, 5),
        at(9 * 60, 0),
        at(10 * 60, 0),
        at(10 * 60, 1));
    records(P1, 0, at(0, 1), at(9 * 60 + 58, 0), at(10 * 60, 2));
    committed.put(P0, 106L);
    committed.put(P1, 2L);

    RewindToOpenDay.Start start = start(P0, P1);
    assertThat(start.offsets()).isEqualTo(Map.of(P0, 101L, P1, 0L));
    assertThat(start.recount())
        .isEqualTo(
            Recount.whole(
                DAY_START,
                NOW - OUT_OF_ORDERNESS.toMillis() - 1,
                ClickEventCodec.MAX_FUTURE_SKEW.toMillis()));
  }

  @Test
  void aMinuteOpenAcrossMidnightRewindsToThePreviousDay() {
    records(P0, 0, at(-2 * 60, 0), at(23 * 60 + 55 - 24 * 60, 0), at(2, 0), at(3, 0));
    committed.put(P0, 4L);

    assertThat(offsets(P0)).isEqualTo(Map.of(P0, 0L));
  }

  @Test
  void aPartitionNeverCommittedStartsAtItsFirstRecordAndOneCommittedAtItsFirstStartsThere() {
    records(P0, 40, at(9 * 60, 0), at(9 * 60, 1));
    records(P1, 7, at(9 * 60, 0));
    committed.put(P1, 7L);

    RewindToOpenDay.Start start = start(P0, P1);
    assertThat(start.offsets()).isEqualTo(Map.of(P0, 40L, P1, 7L));
    assertThat(start.recount())
        .as("P1's group had read the records retention took since")
        .isEqualTo(Recount.partial(NOW, ClickEventCodec.MAX_FUTURE_SKEW.toMillis()));
  }

  @Test
  void aGroupThatReadNothingYetRecountsNothing() {
    records(P0, 0, at(9 * 60, 0), at(9 * 60, 1));
    committed.put(P0, 0L);

    RewindToOpenDay.Start start = start(P0);
    assertThat(start.offsets()).isEqualTo(Map.of(P0, 0L));
    assertThat(start.recount()).isEqualTo(Recount.NONE);
  }

  @Test
  void withoutTheNewestClickOfEveryPartitionTheRecountIsPartial() {
    records(P0, 0, at(9 * 60, 0), at(10 * 60, 0));
    records(P1, 0, at(9 * 60, 0), at(10 * 60, 0));
    committed.put(P0, 2L);
    committed.put(P1, 2L);
    RewindToOpenDay rewind =
        new RewindToOpenDay(
            OUT_OF_ORDERNESS, ALLOWED_LATENESS, offsets -> Map.of(P0, at(10 * 60, 0)), () -> NOW);

    assertThat(rewind.start(List.of(P0, P1), new Retriever()).recount())
        .isEqualTo(Recount.partial(NOW, ClickEventCodec.MAX_FUTURE_SKEW.toMillis()));
  }

  @Test
  void whenRetentionMayHaveRemovedClicksOfTheDayTheRecountIsPartial() {
    // The first record kept is of 09:00: those before it, of the same day, are gone.
    records(P0, 40, at(9 * 60, 0), at(9 * 60, 1), at(10 * 60, 0));
    committed.put(P0, 42L);

    RewindToOpenDay.Start start = start(P0);
    assertThat(start.offsets()).isEqualTo(Map.of(P0, 40L));
    assertThat(start.recount())
        .isEqualTo(Recount.partial(NOW, ClickEventCodec.MAX_FUTURE_SKEW.toMillis()));
  }

  @Test
  void aClickStampedInTheFutureCountsAsStampedNow() {
    // A producer's clock a day ahead must not move the rewind a day forward, past the open minutes.
    records(P0, 0, at(19 * 60, 0), at(19 * 60 + 59, 0), at(44 * 60, 0));
    committed.put(P0, 3L);

    assertThat(offsets(P0)).isEqualTo(Map.of(P0, 0L));
  }

  @Test
  void withoutTheLastRecordsTimestampItStartsAtTheCommittedOffsets() {
    records(P0, 0, at(9 * 60, 0), at(9 * 60, 1), at(9 * 60, 2));
    committed.put(P0, 2L);
    RewindToOpenDay rewind =
        new RewindToOpenDay(OUT_OF_ORDERNESS, ALLOWED_LATENESS, offsets -> Map.of(), () -> NOW);

    RewindToOpenDay.Start start = rewind.start(List.of(P0), new Retriever());
    assertThat(start.offsets()).isEqualTo(Map.of(P0, 2L));
    assertThat(start.recount())
        .isEqualTo(Recount.partial(NOW, ClickEventCodec.MAX_FUTURE_SKEW.toMillis()));
  }

  private Map<TopicPartition, Long> offsets(TopicPartition... partitions) {
    return start(partitions).offsets();
  }

  private RewindToOpenDay.Start start(TopicPartition... partitions) {
    RewindToOpenDay rewind =
        new RewindToOpenDay(OUT_OF_ORDERNESS, ALLOWED_LATENESS, this::lastBefore, () -> NOW);
    return rewind.start(List.of(partitions), new Retriever());
  }

  /** Epoch millis of {@code hh:mm} on the test's day, plus {@code seconds}. */
  private static long at(int minuteOfDay, int seconds) {
    return DAY_START + minuteOfDay * MINUTE + seconds * 1000L;
  }

  private void records(TopicPartition partition, long firstOffset, long... timestamps) {
    TreeMap<Long, Long> log = new TreeMap<>();
    for (int i = 0; i < timestamps.length; i++) {
      log.put(firstOffset + i, timestamps[i]);
    }
    topic.put(partition, log);
  }

  private Map<TopicPartition, Long> lastBefore(Map<TopicPartition, Long> offsets) {
    Map<TopicPartition, Long> timestamps = new HashMap<>();
    offsets.forEach(
        (partition, offset) ->
            timestamps.put(partition, topic.get(partition).lowerEntry(offset).getValue()));
    return timestamps;
  }

  /** What the Kafka source's enumerator answers, from the in-memory topic. */
  private final class Retriever implements PartitionOffsetsRetriever {
    @Override
    public Map<TopicPartition, Long> committedOffsets(Collection<TopicPartition> partitions) {
      Map<TopicPartition, Long> found = new HashMap<>(committed);
      found.keySet().retainAll(partitions);
      return found;
    }

    @Override
    public Map<TopicPartition, Long> endOffsets(Collection<TopicPartition> partitions) {
      Map<TopicPartition, Long> ends = new HashMap<>();
      partitions.forEach(p -> ends.put(p, topic.get(p).lastKey() + 1));
      return ends;
    }

    @Override
    public Map<TopicPartition, Long> beginningOffsets(Collection<TopicPartition> partitions) {
      Map<TopicPartition, Long> firsts = new HashMap<>();
      partitions.forEach(p -> firsts.put(p, topic.get(p).firstKey()));
      return firsts;
    }

    /** As Kafka: the first offset whose timestamp is at or after the time, or none. */
    @Override
    public Map<TopicPartition, OffsetAndTimestamp> offsetsForTimes(
        Map<TopicPartition, Long> times) {
      Map<TopicPartition, OffsetAndTimestamp> found = new HashMap<>();
      times.forEach(
          (partition, time) ->
              topic.get(partition).entrySet().stream()
                  .filter(e -> e.getValue() >= time)
                  .findFirst()
                  .ifPresent(
                      e -> found.put(partition, new OffsetAndTimestamp(e.getKey(), e.getValue()))));
      return found;
    }
  }
}
