package io.tally.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

/**
 * Tests that kustomization.yaml applies every manifest but the Secret template, and that the
 * Secrets line up.
 */
class DeployFolderTest {

  @Test
  void kustomizationAppliesEveryManifestButTheSecretTemplate() throws IOException {
    List<String> manifests;
    try (Stream<Path> files = Files.list(Manifests.FOLDER)) {
      manifests =
          files
              .map(file -> file.getFileName().toString())
              .filter(name -> name.endsWith(".yaml"))
              .filter(
                  name -> !name.equals("kustomization.yaml") && !name.equals(SecretTemplate.FILE))
              .toList();
    }

    assertThat(Manifests.kustomized()).containsExactlyInAnyOrderElementsOf(manifests);
    assertThat(Manifests.read("kustomization.yaml").get(0).path("namespace").asString())
        .isEqualTo("tally");
  }

  @Test
  void theManifestsNameNoNamespaceOfTheirOwn() {
    // One namespace, set once by kustomization.yaml: the Secrets and the Flink service account must
    // be there too.
    for (JsonNode manifest : Manifests.allKustomized()) {
      assertThat(manifest.path("metadata").has("namespace"))
          .as(manifest.path("metadata").path("name").asString())
          .isFalse();
    }
  }

  @Test
  void everySecretReferenceIsInTheTemplateAndEveryTemplateKeyIsUsed() {
    Set<String> referenced = new TreeSet<>();
    for (JsonNode manifest : Manifests.allKustomized()) {
      collectSecretReferences(manifest, referenced);
    }
    Set<String> templated = new TreeSet<>();
    for (Map.Entry<String, Map<String, String>> secret : SecretTemplate.secrets().entrySet()) {
      secret.getValue().keySet().forEach(key -> templated.add(secret.getKey() + "/" + key));
    }
    Set<String> fromTemplate = new TreeSet<>(referenced);
    fromTemplate.removeIf(ref -> Manifests.madeByStrimzi(ref.substring(0, ref.indexOf('/'))));

    assertThat(fromTemplate).isNotEmpty().isEqualTo(templated);
    for (JsonNode user : Manifests.read("kafka-users.yaml")) {
      assertThat(referenced)
          .as("every Kafka login is used")
          .contains(user.path("metadata").path("name").asString() + "/password");
    }
  }

  private static void collectSecretReferences(JsonNode node, Set<String> into) {
    if (node.isObject()) {
      JsonNode reference = node.get("secretKeyRef");
      if (reference != null) {
        into.add(reference.path("name").asString() + "/" + reference.path("key").asString());
      }
      JsonNode volume = node.get("secret");
      if (volume != null && volume.has("secretName")) {
        volume
            .path("items")
            .forEach(
                item ->
                    into.add(
                        volume.path("secretName").asString() + "/" + item.path("key").asString()));
      }
      node.values().forEach(child -> collectSecretReferences(child, into));
    } else if (node.isArray()) {
      node.forEach(child -> collectSecretReferences(child, into));
    }
  }
}
