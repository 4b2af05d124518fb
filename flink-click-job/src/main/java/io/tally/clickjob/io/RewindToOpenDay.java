package io.tally.clickjob.io;

import io.tally.counting.periods.LinkPeriods;
import io.tally.counting.periods.Recount;
import io.tally.event.ClickEventCodec;
import java.io.Serializable;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer.PartitionOffsetsRetriever;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.clients.consumer.OffsetResetStrategy;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where the click source starts when the job starts without state but its consumer group has
 * committed offsets, and what it then recounts ({@link Recount}): not at those offsets, but early
 * enough to read every click of the UTC day that held the oldest minute still open when they were
 * committed.
 *
 * <p>The committed offsets come after the clicks of every minute that was open: started there, the
 * job would count those minutes from their later clicks only. Starting out-of-orderness, a minute
 * and allowed lateness before the newest click read recounts every open minute whole. Starting at
 * the start of that click's UTC day recounts its hours, its day, its visitors and its breakdowns
 * whole too, since the job keeps them in state as well. A click's own time may be ahead of its
 * record's by up to {@link ClickEventCodec#MAX_FUTURE_SKEW}, so the source starts that much before
 * the day, at the first record stamped then: every click of the day is after it. The periods from
 * the day on are then recounted whole, and replace what the earlier run wrote of them ({@link
 * Recount#whole}); the clicks read before the day are not counted again.
 *
 * <p>The newest click read is the last record before the committed offset of each partition; the
 * oldest of those across partitions is used, since the slowest partition held the watermark back. A
 * partition without committed offsets starts at its first record; one whose commit is at its first
 * record starts there. When no record before the committed offsets can be read, or the topic's
 * retention may have removed clicks of the day, the job starts at the committed offsets and its
 * recount is partial ({@link Recount#partial}): it logs the range to reconcile. A job restored from
 * a checkpoint or savepoint never uses this: its splits carry their offsets, its operators their
 * recount.
 *
 * <p>The price is the re-read itself, up to a day and an hour of clicks (more if a partition went
 * quiet for days before the stop), and dead letters written again for the malformed records in it.
 */
public final class RewindToOpenDay {

  private static final Logger LOG = LoggerFactory.getLogger(RewindToOpenDay.class);

  /**
   * Where the source starts and what the run recounts.
   *
   * @param offsets each partition's first offset to read; null to start at the committed offsets
   * @param recount what the run recounts
   */
  public record Start(Map<TopicPartition, Long> offsets, Recount recount) implements Serializable {

    /**
     * The source's starting offsets; a partition it does not name (one made since) starts at its
     * committed offset, else at its first record.
     */
    public OffsetsInitializer initializer() {
      return offsets == null
          ? OffsetsInitializer.committedOffsets(OffsetResetStrategy.EARLIEST)
          : OffsetsInitializer.offsets(offsets, OffsetResetStrategy.EARLIEST);
    }
  }

  /** The timestamp of the last record before given offsets, read from the topic. */
  public interface LastTimestamps extends Serializable {
    /**
     * For each partition whose record before {@code offsets} could be read, that record's
     * timestamp.
     */
    Map<TopicPartition, Long> before(Map<TopicPartition, Long> offsets);
  }

  /** The wall clock; newer record timestamps are read as now. */
  public interface Clock extends Serializable {
    long millis();
  }

  private final long outOfOrdernessMillis;
  private final long lookBackMillis;
  private final LastTimestamps lastTimestamps;
  private final Clock clock;

  /**
   * @param outOfOrderness the job's: how far behind the newest click read its watermark is
   * @param allowedLateness the job's: how long after its end a period takes late clicks
   */
  public RewindToOpenDay(
      Duration outOfOrderness,
      Duration allowedLateness,
      LastTimestamps lastTimestamps,
      Clock clock) {
    this.outOfOrdernessMillis = outOfOrderness.toMillis();
    this.lookBackMillis =
        outOfOrderness.toMillis() + LinkPeriods.MINUTE + allowedLateness.toMillis();
    this.lastTimestamps = lastTimestamps;
    this.clock = clock;
  }

  /**
   * Where a source of {@code topic} for consumer group {@code groupId} starts, read from Kafka with
   * {@code kafkaClient} (its brokers and security). When Kafka cannot be asked, the source starts
   * at the committed offsets, and a run that finds no state there recounts in part.
   */
  public static Start onKafka(
      Properties kafkaClient,
      String topic,
      String groupId,
      Duration outOfOrderness,
      Duration allowedLateness) {
    long now = System.currentTimeMillis();
    RewindToOpenDay rewind =
        new RewindToOpenDay(
            outOfOrderness, allowedLateness, new KafkaLastTimestamps(kafkaClient), () -> now);
    Properties p = consumerProperties(kafkaClient);
    p.put(ConsumerConfig.GROUP_ID_CONFIG, groupId);
    try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p)) {
      List<PartitionInfo> infos = consumer.partitionsFor(topic);
      List<TopicPartition> partitions =
          infos == null
              ? List.of()
              : infos.stream().map(i -> new TopicPartition(topic, i.partition())).toList();
      return rewind.start(partitions, new ConsumerOffsets(consumer));
    } catch (KafkaException e) {
      LOG.warn(
          "Could not read where {} stands for group {}: a run without state starts at the committed"
              + " offsets and recounts in part",
          topic,
          groupId,
          e);
      return new Start(null, Recount.partial(now, ClickEventCodec.MAX_FUTURE_SKEW.toMillis()));
    }
  }

  /** Where the source starts on {@code partitions}, read through {@code retriever}. */
  public Start start(Collection<TopicPartition> partitions, PartitionOffsetsRetriever retriever) {
    long now = clock.millis();
    long futureSkew = ClickEventCodec.MAX_FUTURE_SKEW.toMillis();
    Map<TopicPartition, Long> committed = retriever.committedOffsets(partitions);
    Map<TopicPartition, Long> beginning = retriever.beginningOffsets(partitions);
    Map<TopicPartition, Long> start = new HashMap<>();
    Map<TopicPartition, Long> read = new HashMap<>();
    boolean cut = false;
    for (TopicPartition partition : partitions) {
      long first = beginning.get(partition);
      Long commit = committed.get(partition);
      if (commit == null || commit < 0) {
        start.put(partition, first);
      } else {
        start.put(partition, Math.max(commit, first));
        // Committed at or before the first record kept: the clicks it had read are gone.
        cut |= commit <= first && first > 0;
        if (commit > first) {
          read.put(partition, commit);
        }
      }
    }
    if (read.isEmpty()) {
      // Nothing was read before the commits, if any: nothing to recount, unless retention took it.
      return new Start(start, cut ? partial(start, now, futureSkew) : Recount.NONE);
    }
    Map<TopicPartition, Long> newest = lastTimestamps.before(read);
    if (newest.size() < read.size()) {
      // Without the slowest partition's newest click, the open day could be taken too late.
      LOG.warn(
          "The record before the committed offset of some of {} could not be read; read: {}",
          read.keySet(),
          newest.keySet());
      return new Start(start, partial(start, now, futureSkew));
    }
    long oldest = newest.values().stream().mapToLong(t -> Math.min(t, now)).min().orElseThrow();
    long from = Math.floorDiv(oldest - lookBackMillis, LinkPeriods.DAY) * LinkPeriods.DAY;
    Map<TopicPartition, Long> query = new HashMap<>();
    read.keySet().forEach(partition -> query.put(partition, from - futureSkew));
    Map<TopicPartition, OffsetAndTimestamp> found = retriever.offsetsForTimes(query);
    for (TopicPartition partition : read.keySet()) {
      OffsetAndTimestamp at = found.get(partition);
      long first = beginning.get(partition);
      // At the first record still kept, those before it may have been of the day too.
      cut |= at == null || (at.offset() <= first && first > 0);
      if (at != null) {
        start.merge(partition, at.offset(), Math::min);
      }
    }
    if (cut) {
      return new Start(start, partial(start, now, futureSkew));
    }
    LOG.info(
        "If the job starts without state, it recounts whole from {} (the UTC day of the oldest"
            + " minute that may have been open at the committed offsets {}), starting at {}",
        Instant.ofEpochMilli(from),
        committed,
        start);
    // Caught up once every partition has given a click stamped after the start: its watermark is
    // then past the start less the out-of-orderness.
    return new Start(start, Recount.whole(from, now - outOfOrdernessMillis - 1, futureSkew));
  }

  private static Recount partial(Map<TopicPartition, Long> start, long now, long futureSkew) {
    LOG.warn(
        "If the job starts without state, the clicks of the periods open at the stop cannot all be"
            + " read again: it starts at {} and counts the periods before {} in part, never"
            + " lowering them. Reconcile the days up to then to make them exact",
        start,
        Instant.ofEpochMilli(now + futureSkew));
    return Recount.partial(now, futureSkew);
  }

  private static Properties consumerProperties(Properties kafkaClient) {
    Properties p = new Properties();
    p.putAll(kafkaClient);
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    p.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "30000");
    // A mistyped topic is an error to report, not a topic to create.
    p.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, "false");
    return p;
  }

  /** The offsets a consumer of the group reads, as the source's enumerator would read them. */
  private record ConsumerOffsets(KafkaConsumer<byte[], byte[]> consumer)
      implements PartitionOffsetsRetriever {

    @Override
    public Map<TopicPartition, Long> committedOffsets(Collection<TopicPartition> partitions) {
      Map<TopicPartition, Long> offsets = new HashMap<>();
      consumer
          .committed(Set.copyOf(partitions))
          .forEach(
              (partition, offset) -> {
                if (offset != null) {
                  offsets.put(partition, offset.offset());
                }
              });
      return offsets;
    }

    @Override
    public Map<TopicPartition, Long> endOffsets(Collection<TopicPartition> partitions) {
      return consumer.endOffsets(partitions);
    }

    @Override
    public Map<TopicPartition, Long> beginningOffsets(Collection<TopicPartition> partitions) {
      return consumer.beginningOffsets(partitions);
    }

    @Override
    public Map<TopicPartition, OffsetAndTimestamp> offsetsForTimes(
        Map<TopicPartition, Long> times) {
      Map<TopicPartition, OffsetAndTimestamp> found = new HashMap<>();
      consumer
          .offsetsForTimes(times)
          .forEach(
              (partition, at) -> {
                if (at != null) {
                  found.put(partition, at);
                }
              });
      return found;
    }
  }

  /** Reads the record before each offset with a short-lived consumer that joins no group. */
  static final class KafkaLastTimestamps implements LastTimestamps {

    /** How far before an offset to look for a record: control records and compaction leave gaps. */
    private static final int LOOK_BEHIND = 16;

    private static final Duration READ_FOR = Duration.ofSeconds(30);

    private final Properties kafkaClient;

    KafkaLastTimestamps(Properties kafkaClient) {
      this.kafkaClient = kafkaClient;
    }

    @Override
    public Map<TopicPartition, Long> before(Map<TopicPartition, Long> offsets) {
      Properties p = consumerProperties(kafkaClient);
      Map<TopicPartition, Long> timestamps = new HashMap<>();
      try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p)) {
        consumer.assign(offsets.keySet());
        Map<TopicPartition, Long> first = consumer.beginningOffsets(offsets.keySet());
        offsets.forEach(
            (partition, offset) ->
                consumer.seek(
                    partition, Math.max(first.getOrDefault(partition, 0L), offset - LOOK_BEHIND)));
        Map<TopicPartition, Long> pending = new HashMap<>(offsets);
        long deadline = System.nanoTime() + READ_FOR.toNanos();
        while (!pending.isEmpty() && System.nanoTime() < deadline) {
          for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
            TopicPartition partition = new TopicPartition(r.topic(), r.partition());
            Long offset = pending.get(partition);
            if (offset != null && r.offset() < offset) {
              timestamps.put(partition, r.timestamp());
            }
          }
          for (TopicPartition partition : Map.copyOf(pending).keySet()) {
            if (consumer.position(partition) >= pending.get(partition)) {
              pending.remove(partition);
              consumer.pause(List.of(partition));
            }
          }
        }
      }
      return timestamps;
    }
  }
}
