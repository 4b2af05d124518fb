package io.tally.deploy;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.NoSuchElementException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.MappingIterator;
import tools.jackson.dataformat.yaml.YAMLMapper;

/**
 * The manifests in {@code deploy/kubernetes/}, read as YAML documents (several per file where they
 * are).
 */
public final class Manifests {

  /** Surefire runs in the module's folder, {@code deploy/}. */
  static final Path FOLDER = Path.of("kubernetes");

  private static final YAMLMapper YAML = new YAMLMapper();

  private Manifests() {}

  /** Every document of one file, in order; empty documents are skipped. */
  public static List<JsonNode> read(String fileName) {
    Path file = FOLDER.resolve(fileName);
    try {
      return parse(Files.readString(file));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read manifest " + file.toAbsolutePath(), e);
    }
  }

  /** Every document of a YAML text. */
  static List<JsonNode> parse(String yaml) {
    List<JsonNode> documents = new ArrayList<>();
    try (MappingIterator<JsonNode> it = YAML.readerFor(JsonNode.class).readValues(yaml)) {
      it.forEachRemaining(node -> addIfPresent(documents, node));
    }
    return documents;
  }

  private static void addIfPresent(List<JsonNode> documents, JsonNode node) {
    if (node != null && !node.isNull() && !node.isMissingNode()) {
      documents.add(node);
    }
  }

  /** The one document of a file with this kind and name. */
  static JsonNode find(String fileName, String kind, String name) {
    return read(fileName).stream()
        .filter(
            doc ->
                kind.equals(doc.path("kind").asString())
                    && name.equals(doc.path("metadata").path("name").asString()))
        .findFirst()
        .orElseThrow(
            () -> new NoSuchElementException("no " + kind + " " + name + " in " + fileName));
  }

  /** The files kustomization.yaml applies. */
  static List<String> kustomized() {
    List<String> files = new ArrayList<>();
    read("kustomization.yaml")
        .get(0)
        .path("resources")
        .forEach(resource -> files.add(resource.asString()));
    return files;
  }

  /** Every document of every file kustomization.yaml applies. */
  static List<JsonNode> allKustomized() {
    List<JsonNode> documents = new ArrayList<>();
    kustomized().forEach(file -> documents.addAll(read(file)));
    return documents;
  }

  /** The Secret in which Strimzi keeps the Kafka cluster {@code tally}'s CA certificate. */
  static final String KAFKA_CLUSTER_CA = "tally-cluster-ca-cert";

  /**
   * Whether Strimzi makes the Secret {@code name}: a KafkaUser's (its {@code password}) or the
   * Kafka cluster's CA. Those are not in the template.
   */
  static boolean madeByStrimzi(String name) {
    return name.equals(KAFKA_CLUSTER_CA)
        || read("kafka-users.yaml").stream()
            .anyMatch(user -> user.path("metadata").path("name").asString().equals(name));
  }

  /** A string list (a container's args, say) as Java strings. */
  static String[] strings(JsonNode array) {
    List<String> values = new ArrayList<>();
    array.forEach(value -> values.add(value.asString()));
    return values.toArray(String[]::new);
  }
}
