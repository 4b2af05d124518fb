package io.tally.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.local.ClickTopics;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.NewTopic;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.dataformat.yaml.YAMLMapper;

/**
 * Tests that deploy/kubernetes/kafka-topics.yaml and docker-compose.yml's kafka-init declare the
 * topics of {@link ClickTopics}, with the same partitions and settings: one source for the topics.
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

    assertThat(manifests.keySet())
        .containsExactlyInAnyOrderElementsOf(
            ClickTopics.all().stream().map(NewTopic::name).toList());
    for (NewTopic topic : ClickTopics.all()) {
      JsonNode spec = manifests.get(topic.name()).path("spec");
      assertThat(spec.path("partitions").asInt()).as(topic.name()).isEqualTo(topic.numPartitions());
      Map<String, String> config = new HashMap<>();
      spec.path("config")
          .properties()
          .forEach(entry -> config.put(entry.getKey(), entry.getValue().asString()));
      assertThat(config).as(topic.name()).containsAllEntriesOf(topic.configs());
      config.keySet().removeAll(topic.configs().keySet());
      assertThat(config.keySet())
          .as(topic.name() + ": settings the launcher does not have")
          .isSubsetOf(CLUSTER_ONLY_SETTINGS);
    }
  }

  @Test
  void dockerComposeCreatesTheSameTopics() throws IOException {
    JsonNode compose =
        new YAMLMapper().readTree(Files.readString(Path.of("..", "docker-compose.yml")));
    String script =
        compose
            .path("services")
            .path("kafka-init")
            .path("command")
            .valueStream()
            .map(JsonNode::asString)
            .collect(Collectors.joining("\n"));
    Map<String, NewTopic> created = new HashMap<>();
    // One kafka-topics.sh call per line once the shell's line continuations are joined.
    for (String call : script.replace("\\\n", " ").split("\n")) {
      if (call.contains("--create")) {
        NewTopic topic = topicCreatedBy(call.trim().split("\\s+"));
        created.put(topic.name(), topic);
      }
    }

    assertThat(created.keySet())
        .containsExactlyInAnyOrderElementsOf(
            ClickTopics.all().stream().map(NewTopic::name).toList());
    for (NewTopic topic : ClickTopics.all()) {
      assertThat(created.get(topic.name()).numPartitions())
          .as(topic.name())
          .isEqualTo(topic.numPartitions());
      assertThat(created.get(topic.name()).configs()).as(topic.name()).isEqualTo(topic.configs());
    }
  }

  @Test
  void eachTopicBelongsToTheStrimziClusterNamedTally() {
    for (JsonNode topic : readTopics()) {
      assertThat(topic.path("metadata").path("labels").path("strimzi.io/cluster").asString())
          .isEqualTo("tally");
      assertThat(topic.path("spec").path("replicas").asInt())
          .isGreaterThan(topic.path("spec").path("config").path("min.insync.replicas").asInt());
    }
  }

  /** The topic a {@code kafka-topics.sh --create} call makes: its name, partitions and settings. */
  private static NewTopic topicCreatedBy(String[] words) {
    String name = null;
    int partitions = 0;
    Map<String, String> configs = new HashMap<>();
    for (int i = 0; i + 1 < words.length; i++) {
      switch (words[i]) {
        case "--topic" -> name = words[i + 1];
        case "--partitions" -> partitions = Integer.parseInt(words[i + 1]);
        case "--config" -> {
          String[] setting = words[i + 1].split("=", 2);
          configs.put(setting[0], setting[1]);
        }
        default -> {}
      }
    }
    return new NewTopic(name, partitions, (short) 1).configs(configs);
  }

  private static List<JsonNode> readTopics() {
    return Manifests.read("kafka-topics.yaml");
  }
}
