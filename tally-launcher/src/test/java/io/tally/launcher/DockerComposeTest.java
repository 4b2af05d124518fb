package io.tally.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;

/**
 * What {@code docker-compose.yml} exposes, read as YAML (no Docker engine runs the file in the build):
 * only redirect-web listens beyond the host, the Flink cluster takes no uploaded jars, and the job's
 * JDBC URL does not depend on the batch rewrite.
 */
class DockerComposeTest {

  private static final Path COMPOSE = Path.of("..", "docker-compose.yml");

  @Test
  void everyPortButTheRedirectsIsPublishedOnLoopbackOnly() throws Exception {
    JsonNode services = compose().get("services");
    List<String> published = new ArrayList<>();
    for (Map.Entry<String, JsonNode> service : services.properties()) {
      JsonNode ports = service.getValue().get("ports");
      if (ports != null) {
        ports.forEach(port -> published.add(service.getKey() + " " + port.asText()));
      }
    }

    assertThat(published).containsExactlyInAnyOrder(
        "kafka 127.0.0.1:9092:9092",
        "postgres 127.0.0.1:5432:5432",
        "jobmanager 127.0.0.1:8081:8081",
        "redirect-web 8080:8080");
  }

  @Test
  void theFlinkClusterTakesNoUploadedJars() throws Exception {
    JsonNode services = compose().get("services");

    for (String node : List.of("jobmanager", "taskmanager")) {
      assertThat(services.get(node).get("environment").get("FLINK_PROPERTIES").asText())
          .as(node).contains("web.submit.enable: false");
    }
  }

  @Test
  void theJobsJdbcUrlLeavesTheBatchRewriteOff() throws Exception {
    JsonNode submit = compose().get("services").get("click-job-submit").get("command");

    assertThat(submit.toString()).contains("--jdbc-url").doesNotContain("reWriteBatchedInserts");
  }

  /** The file with its anchors resolved (SnakeYAML, which Jackson's YAML module reads with, does that). */
  private static JsonNode compose() throws Exception {
    try (Reader in = Files.newBufferedReader(COMPOSE)) {
      Object document = new Yaml(new LoaderOptions()).load(in);
      return new ObjectMapper().valueToTree(document);
    }
  }
}
