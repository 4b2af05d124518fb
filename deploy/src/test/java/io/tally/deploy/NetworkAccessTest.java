package io.tally.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

/**
 * Who may reach Flink's REST API and who may write the click topic, as the manifests say it: the
 * NetworkPolicy over Flink's pods and the Kafka logins' ACLs, and every workload logging in to
 * Kafka over TLS as its own user.
 */
class NetworkAccessTest {

  private static final String REST_PORT = "8081";

  @Test
  void flinksRestPortIsReachedFromThisNamespaceAndTheOperatorOnly() {
    JsonNode policy =
        Manifests.find("network-policies.yaml", "NetworkPolicy", "flink-in-namespace-only");
    assertThat(policy.path("spec").path("podSelector").path("matchLabels").path("type").asString())
        .as("the label Flink puts on every JobManager and TaskManager pod")
        .isEqualTo("flink-native-kubernetes");

    for (JsonNode rule : policy.path("spec").path("ingress")) {
      boolean opensRestPort =
          !rule.has("ports")
              || rule.path("ports")
                  .valueStream()
                  .anyMatch(p -> p.path("port").asString().equals(REST_PORT));
      if (!opensRestPort) {
        continue;
      }
      for (JsonNode peer : rule.path("from")) {
        if (peer.has("namespaceSelector")) {
          assertThat(
                  peer.path("namespaceSelector")
                      .path("matchLabels")
                      .path("kubernetes.io/metadata.name")
                      .asString())
              .as("the only other namespace that reaches the REST port")
              .isEqualTo("flink-operator");
          assertThat(peer.has("podSelector")).isFalse();
        } else {
          assertThat(peer.path("podSelector").isEmpty()).as("any pod of this namespace").isTrue();
        }
      }
      assertThat(rule.has("from")).as("a rule opening the REST port names its peers").isTrue();
    }
  }

  @Test
  void onlyRedirectWebMayWriteTheClickTopic() {
    Map<String, List<String>> clickTopicOperations = new TreeMap<>();
    for (JsonNode user : Manifests.read("kafka-users.yaml")) {
      List<String> operations = new ArrayList<>();
      for (JsonNode acl : user.path("spec").path("authorization").path("acls")) {
        if (acl.path("resource").path("type").asString().equals("topic")
            && acl.path("resource").path("name").asString().equals("clicks")) {
          acl.path("operations").forEach(op -> operations.add(op.asString()));
        }
      }
      clickTopicOperations.put(user.path("metadata").path("name").asString(), operations);
    }

    assertThat(clickTopicOperations)
        .containsOnlyKeys("redirect-web", "click-job", "reconcile")
        .hasEntrySatisfying("redirect-web", ops -> assertThat(ops).contains("Write"))
        .hasEntrySatisfying("click-job", ops -> assertThat(ops).doesNotContain("Write", "All"))
        .hasEntrySatisfying("reconcile", ops -> assertThat(ops).doesNotContain("Write", "All"));
  }

  @Test
  void everyWorkloadLogsInToKafkaOverTlsAsItsOwnUser() {
    JsonNode web = Manifests.find("redirect-web.yaml", "Deployment", "redirect-web");
    Map<String, String> env = new TreeMap<>();
    web.path("spec")
        .path("template")
        .path("spec")
        .path("containers")
        .get(0)
        .path("env")
        .forEach(e -> env.put(e.path("name").asString(), e.path("value").asString()));
    assertThat(env)
        .containsEntry("TALLY_KAFKA_SECURITY_PROTOCOL", "SASL_SSL")
        .containsEntry("TALLY_KAFKA_SASL_USERNAME", "redirect-web");

    for (String[] job :
        List.of(
            new String[] {"click-job.yaml", "tally-click-count", "click-job"},
            new String[] {"reconcile-job.yaml", "tally-reconcile", "reconcile"})) {
      List<String> args =
          List.of(
              Manifests.strings(
                  Manifests.find(job[0], "FlinkDeployment", job[1])
                      .path("spec")
                      .path("job")
                      .path("args")));
      assertThat(args.get(args.indexOf("--kafka-security-protocol") + 1)).isEqualTo("SASL_SSL");
      assertThat(args.get(args.indexOf("--kafka-sasl-username") + 1)).isEqualTo(job[2]);
    }
  }
}
