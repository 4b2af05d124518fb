package io.tally.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.deploy.Manifests;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.admin.NewTopic;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

/**
 * Tests that deploy/kubernetes/kafka-topics.yaml declares the topics of {@link ClickTopics}, with the same partitions
 * and settings. In ClickTopics' package because the launcher keeps that class to itself; reading it here keeps one
 * source for the topics.
 */
class KafkaTopicManifestTest {

  /** Settings that only make sense with several brokers, which `./tally up` does not have. */
  private static final Set<String> CLUSTER_ONLY_SETTINGS = Set.of("min.insync.replicas");

  @Test
  void theStrimziTopicsAreTheLaunchersTopics() {
    Map<String, JsonNode> manifests = new HashMap<>();
    for (JsonNode topic : readTopics()) {
      assertThat(topic.path("apiVersion").asString()).isEqualTo("kafka.strimzi.io/v1beta2");
      assertThat(topic.path("kind").asString()).isEqualTo("KafkaTopic");
      manifests.put(topic.path("metadata").path("name").asString(), topic);
    }

    assertThat(manifests.keySet()).containsExactlyInAnyOrderElementsOf(ClickTopics.all().stream().map(NewTopic::name).toList());
    for (NewTopic topic : ClickTopics.all()) {
      JsonNode spec = manifests.get(topic.name()).path("spec");
      assertThat(spec.path("partitions").asInt()).as(topic.name()).isEqualTo(topic.numPartitions());
      Map<String, String> config = new HashMap<>();
      spec.path("config").properties().forEach(entry -> config.put(entry.getKey(), entry.getValue().asString()));
      assertThat(config).as(topic.name()).containsAllEntriesOf(topic.configs());
      config.keySet().removeAll(topic.configs().keySet());
      assertThat(config.keySet()).as(topic.name() + ": settings the launcher does not have").isSubsetOf(CLUSTER_ONLY_SETTINGS);
    }
  }

  @Test
  void eachTopicBelongsToTheStrimziClusterNamedTally() {
    for (JsonNode topic : readTopics()) {
      assertThat(topic.path("metadata").path("labels").path("strimzi.io/cluster").asString()).isEqualTo("tally");
      assertThat(topic.path("spec").path("replicas").asInt()).isGreaterThan(topic.path("spec").path("config").path("min.insync.replicas").asInt());
    }
  }

  private static List<JsonNode> readTopics() {
    return Manifests.read("kafka-topics.yaml");
  }
}
