package io.tally.reconcile;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListOffsetsResult.ListOffsetsResultInfo;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

/**
 * Which part of a time range the click topic still holds. Retention (by age, or by size) deletes
 * the start of each partition's log on its own, and a link's clicks may sit in any partition: click
 * records have no key, so the producer spreads every link over all of them (see {@code
 * ClickRecords}). A recount may therefore judge a minute, hour or day of any link only from where
 * every partition's coverage starts, the latest of their starts ({@link PartitionCoverage}); before
 * that it may have seen only part of a link's clicks.
 *
 * <p>The rule holds as well for older records keyed by code (each link in one partition) and for a
 * topic whose partition count has grown since the range was written. A topic that does not exist
 * covers nothing.
 */
public final class LogCoverage {

  private final String topic;
  private final boolean exists;
  private final List<PartitionCoverage> partitions;

  LogCoverage(String topic, boolean exists, List<PartitionCoverage> partitions) {
    this.topic = topic;
    this.exists = exists;
    this.partitions = List.copyOf(partitions);
  }

  /**
   * Asks the brokers {@code kafkaClient} names (with its security) what each partition of {@code
   * topic} still holds.
   */
  public static LogCoverage probe(Properties kafkaClient, String topic, Duration slack) {
    String bootstrapServers = kafkaClient.getProperty(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG);
    try (Admin admin = Admin.create(kafkaClient)) {
      TopicDescription description;
      try {
        description = admin.describeTopics(List.of(topic)).topicNameValues().get(topic).get();
      } catch (ExecutionException e) {
        if (e.getCause() instanceof UnknownTopicOrPartitionException) {
          return new LogCoverage(topic, false, List.of());
        }
        throw new IllegalStateException(
            "cannot describe topic '" + topic + "' at " + bootstrapServers, e.getCause());
      }
      List<TopicPartition> all =
          description.partitions().stream()
              .map(p -> new TopicPartition(topic, p.partition()))
              .sorted((a, b) -> a.partition() - b.partition())
              .toList();
      Map<TopicPartition, ListOffsetsResultInfo> start = offsets(admin, all, OffsetSpec.earliest());
      Map<TopicPartition, ListOffsetsResultInfo> end = offsets(admin, all, OffsetSpec.latest());
      // Every click is stored with its time as timestamp (never negative), so the first record at
      // or after time 0 is the earliest one retention has left, and the broker answers with its
      // timestamp.
      Map<TopicPartition, ListOffsetsResultInfo> first =
          offsets(admin, all, OffsetSpec.forTimestamp(0));
      List<PartitionCoverage> coverage = new ArrayList<>();
      for (TopicPartition tp : all) {
        ListOffsetsResultInfo earliest = first.get(tp);
        long earliestTimestamp = earliest.offset() < 0 ? -1 : earliest.timestamp();
        coverage.add(
            PartitionCoverage.of(
                tp.partition(),
                start.get(tp).offset(),
                end.get(tp).offset(),
                earliestTimestamp,
                slack));
      }
      return new LogCoverage(topic, true, coverage);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(
          "interrupted while asking Kafka about topic '" + topic + "'", e);
    }
  }

  private static Map<TopicPartition, ListOffsetsResultInfo> offsets(
      Admin admin, List<TopicPartition> partitions, OffsetSpec spec) throws InterruptedException {
    try {
      return admin
          .listOffsets(
              partitions.stream().collect(Collectors.toMap(Function.identity(), tp -> spec)))
          .all()
          .get();
    } catch (ExecutionException e) {
      throw new IllegalStateException("cannot list the offsets of " + partitions, e.getCause());
    }
  }

  public String topic() {
    return topic;
  }

  /** Whether the topic exists at all. */
  public boolean exists() {
    return exists;
  }

  public List<PartitionCoverage> partitions() {
    return partitions;
  }

  /**
   * Where the part of {@code range} the log covers for every link starts, the latest start of any
   * partition: a minute, hour or day is covered when it starts at or after it; {@code range.to()}
   * when none is.
   */
  public Instant coveredFrom(TimeRange range) {
    if (!exists || partitions.isEmpty()) {
      return range.to();
    }
    return partitions.stream()
        .map(p -> p.coveredFrom(range))
        .max(Comparator.naturalOrder())
        .orElseThrow();
  }

  /** Whether every partition covers the whole range. */
  public boolean coversAll(TimeRange range) {
    return exists && coveredFrom(range).equals(range.from());
  }

  /** The coverage of {@code range} as JSON for {@code reconcile_runs.coverage}. */
  String json(TimeRange range) {
    return partitions.stream()
        .map(PartitionCoverage::json)
        .collect(
            Collectors.joining(
                ",",
                "{\"topic\":\""
                    + topic.replace("\"", "\\\"")
                    + "\",\"exists\":"
                    + exists
                    + ",\"covered_from\":\""
                    + coveredFrom(range)
                    + "\",\"partitions\":[",
                "]}"));
  }
}
