package io.tally.clickjob.io;

import io.tally.counting.periods.LinkPeriods;
import java.io.Serializable;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.clients.consumer.OffsetResetStrategy;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where the click source starts when the job starts without state but its consumer group has
 * committed offsets: not at those offsets, but at the start of the UTC day that held the oldest
 * minute still open when they were committed.
 *
 * <p>The committed offsets come after the clicks of every minute that was open: started there, the
 * job would count those minutes from their later clicks only, and the upserts, which never lower a
 * row, would keep whichever partial count was larger. Starting {@code lookBack} (out-of-orderness,
 * a minute and allowed lateness) before the newest click read recounts every open minute whole.
 * Starting at the start of that click's UTC day recounts its hours, its day, its visitors and its
 * breakdowns whole too, since the job keeps them in state as well: a stateless job that recounted
 * only the open minutes would write hour and day totals of those minutes alone, which the
 * never-lowering upserts would ignore. The re-read is harmless: the dedup set is empty, so each
 * click counts once, and every row written is a whole total that replaces a smaller one and leaves
 * an equal one as it was.
 *
 * <p>The newest click read is the last record before the committed offset of each partition; the
 * oldest of those across partitions is used, since the slowest partition held the watermark back. A
 * partition without committed offsets starts at its first record; one whose commit is at its first
 * record starts there. A job restored from a checkpoint or savepoint never gets here: its splits
 * carry their offsets.
 *
 * <p>The price is the re-read itself, up to a day of clicks (more if a partition went quiet for
 * days before the stop), and dead letters written again for the malformed and late records in it.
 */
public final class RewindToOpenDay implements OffsetsInitializer {

  private static final Logger LOG = LoggerFactory.getLogger(RewindToOpenDay.class);

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

  private final long lookBackMillis;
  private final LastTimestamps lastTimestamps;
  private final Clock clock;

  public RewindToOpenDay(Duration lookBack, LastTimestamps lastTimestamps, Clock clock) {
    this.lookBackMillis = lookBack.toMillis();
    this.lastTimestamps = lastTimestamps;
    this.clock = clock;
  }

  /** Reads the timestamps with a consumer of its own on {@code bootstrapServers}. */
  public static RewindToOpenDay onKafka(String bootstrapServers, Duration lookBack) {
    return new RewindToOpenDay(
        lookBack, new KafkaLastTimestamps(bootstrapServers), System::currentTimeMillis);
  }

  @Override
  public Map<TopicPartition, Long> getPartitionOffsets(
      Collection<TopicPartition> partitions, PartitionOffsetsRetriever retriever) {
    Map<TopicPartition, Long> committed = retriever.committedOffsets(partitions);
    Map<TopicPartition, Long> beginning = retriever.beginningOffsets(partitions);
    Map<TopicPartition, Long> start = new HashMap<>();
    Map<TopicPartition, Long> read = new HashMap<>();
    for (TopicPartition partition : partitions) {
      long first = beginning.get(partition);
      Long commit = committed.get(partition);
      if (commit == null || commit < 0) {
        start.put(partition, first);
      } else {
        start.put(partition, Math.max(commit, first));
        if (commit > first) {
          read.put(partition, commit);
        }
      }
    }
    if (read.isEmpty()) {
      return start;
    }
    Map<TopicPartition, Long> newest = lastTimestamps.before(read);
    if (newest.isEmpty()) {
      LOG.warn(
          "Started without state, but no record before the committed offsets of {} could be read:"
              + " starting at the committed offsets, so the minutes open then are counted from"
              + " later clicks only",
          read);
      return start;
    }
    long now = clock.millis();
    long oldest = newest.values().stream().mapToLong(t -> Math.min(t, now)).min().orElseThrow();
    long from = Math.floorDiv(oldest - lookBackMillis, LinkPeriods.DAY) * LinkPeriods.DAY;
    Map<TopicPartition, Long> query = new HashMap<>();
    read.keySet().forEach(partition -> query.put(partition, from));
    Map<TopicPartition, OffsetAndTimestamp> found = retriever.offsetsForTimes(query);
    for (TopicPartition partition : read.keySet()) {
      OffsetAndTimestamp at = found.get(partition);
      if (at != null) {
        start.merge(partition, at.offset(), Math::min);
      }
    }
    LOG.info(
        "Started without state: recounting from {} (the UTC day of the oldest minute that may have"
            + " been open at the committed offsets {}); starting at {}",
        Instant.ofEpochMilli(from),
        committed,
        start);
    return start;
  }

  @Override
  public OffsetResetStrategy getAutoOffsetResetStrategy() {
    return OffsetResetStrategy.EARLIEST;
  }

  /** Reads the record before each offset with a short-lived consumer that joins no group. */
  static final class KafkaLastTimestamps implements LastTimestamps {

    /** How far before an offset to look for a record: control records and compaction leave gaps. */
    private static final int LOOK_BEHIND = 16;

    private static final Duration READ_FOR = Duration.ofSeconds(30);

    private final String bootstrapServers;

    KafkaLastTimestamps(String bootstrapServers) {
      this.bootstrapServers = bootstrapServers;
    }

    @Override
    public Map<TopicPartition, Long> before(Map<TopicPartition, Long> offsets) {
      Properties p = new Properties();
      p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
      p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
      p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
      p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
      p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
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
