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
 * What {@code docker-compose.yml} exposes, read as YAML (no Docker engine runs the file in the
 * build): only redirect-web listens beyond the host, the Flink cluster takes no uploaded jars, and
 * the job's JDBC URL does not depend on the batch rewrite; the Flink processes run the Prometheus
 * reporter that Prometheus scrapes, and every file the services mount from the repository exists
 * where they expect it.
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

    assertThat(published)
        .containsExactlyInAnyOrder(
            "kafka 127.0.0.1:9092:9092",
            "postgres 127.0.0.1:5432:5432",
            "jobmanager 127.0.0.1:8081:8081",
            "prometheus 127.0.0.1:9090:9090",
            "grafana 127.0.0.1:3000:3000",
            "redirect-web 8080:8080");
  }

  @Test
  void onlyTheSchemaServiceConnectsAsTheOwnerAndRedirectWebAsItsLeastPrivilegeLogin()
      throws Exception {
    JsonNode services = compose().get("services");
    JsonNode schema = services.get("schema").get("environment");
    JsonNode web = services.get("redirect-web").get("environment");

    assertThat(schema.get("TALLY_PG_USER").asText()).isEqualTo("postgres");
    assertThat(schema.get("TALLY_PG_PASSWORD").asText()).startsWith("${POSTGRES_PASSWORD");
    assertThat(web.get("TALLY_PG_USER").asText()).isEqualTo("tally_web");
    assertThat(web.get("TALLY_PG_PASSWORD").asText()).startsWith("${TALLY_WEB_DB_PASSWORD");
    assertThat(web.get("TALLY_PG_MIGRATE").asText()).isEqualTo("false");
    assertThat(services.get("click-job-submit").get("command").toString())
        .contains("--jdbc-user tally_job");
  }

  @Test
  void theFlinkClusterTakesNoUploadedJars() throws Exception {
    JsonNode services = compose().get("services");

    for (String node : List.of("jobmanager", "taskmanager")) {
      assertThat(services.get(node).get("environment").get("FLINK_PROPERTIES").asText())
          .as(node)
          .contains("web.submit.enable: false");
    }
  }

  @Test
  void theJobsJdbcUrlLeavesTheBatchRewriteOff() throws Exception {
    JsonNode submit = compose().get("services").get("click-job-submit").get("command");

    assertThat(submit.toString()).contains("--jdbc-url").doesNotContain("reWriteBatchedInserts");
  }

  @Test
  void theFlinkProcessesRunThePrometheusReporterThatPrometheusScrapes() throws Exception {
    JsonNode services = compose().get("services");

    for (String node : List.of("jobmanager", "taskmanager")) {
      assertThat(services.get(node).get("environment").get("FLINK_PROPERTIES").asText())
          .as(node)
          .contains(
              "metrics.reporter.prom.factory.class:"
                  + " org.apache.flink.metrics.prometheus.PrometheusReporterFactory")
          .contains("metrics.reporter.prom.port: 9250-9260");
    }
    JsonNode prometheus = yaml(Path.of("..", "docs", "prometheus", "prometheus.yml"));
    List<String> targets = new ArrayList<>();
    for (JsonNode job : prometheus.get("scrape_configs")) {
      job.path("static_configs")
          .forEach(c -> c.get("targets").forEach(t -> targets.add(t.asText())));
      job.path("dns_sd_configs")
          .forEach(
              c ->
                  c.get("names")
                      .forEach(n -> targets.add(n.asText() + ":" + c.get("port").asText())));
    }
    assertThat(targets)
        .containsExactlyInAnyOrder("redirect-web:9400", "jobmanager:9250", "taskmanager:9250");
    assertThat(prometheus.get("rule_files"))
        .extracting(JsonNode::asText)
        .containsExactly("/etc/prometheus/tally-alerts.yml");
  }

  @Test
  void everyFileMountedFromTheRepositoryExists() throws Exception {
    JsonNode services = compose().get("services");
    List<String> mounts = new ArrayList<>();
    for (Map.Entry<String, JsonNode> service : services.properties()) {
      for (JsonNode volume : service.getValue().path("volumes")) {
        if (volume.path("type").asText().equals("bind")) {
          mounts.add(
              service.getKey()
                  + " "
                  + volume.get("source").asText()
                  + " -> "
                  + volume.get("target").asText());
        }
      }
    }

    assertThat(mounts)
        .contains(
            "prometheus ./docs/prometheus/prometheus.yml -> /etc/prometheus/prometheus.yml",
            "prometheus ./docs/prometheus/tally-alerts.yml -> /etc/prometheus/tally-alerts.yml",
            "grafana ./docs/grafana/provisioning/datasources ->"
                + " /etc/grafana/provisioning/datasources",
            "grafana ./docs/grafana/provisioning/dashboards ->"
                + " /etc/grafana/provisioning/dashboards",
            "grafana ./docs/grafana/tally.json -> /etc/grafana/dashboards/tally.json");
    for (String mount : mounts) {
      String source = mount.split(" ")[1];
      // The two jars are built by ./mvnw package (the file's header says so); everything else is
      // committed.
      if (!source.endsWith(".jar")) {
        assertThat(Path.of("..").resolve(source)).as(mount).exists();
      }
    }
  }

  @Test
  void grafanaLoadsTheDashboardOnTheProvisionedPrometheus() throws Exception {
    JsonNode datasource =
        yaml(Path.of("..", "docs", "grafana", "provisioning", "datasources", "prometheus.yml"))
            .at("/datasources/0");
    JsonNode provider =
        yaml(Path.of("..", "docs", "grafana", "provisioning", "dashboards", "tally.yml"))
            .at("/providers/0");
    JsonNode dashboard = MonitoringFiles.dashboard();

    assertThat(datasource.get("url").asText()).isEqualTo("http://prometheus:9090");
    assertThat(dashboard.at("/templating/list/0/current/value").asText())
        .as("the dashboard's datasource variable starts on the provisioned one")
        .isEqualTo(datasource.get("uid").asText());
    assertThat(provider.at("/options/path").asText()).isEqualTo("/etc/grafana/dashboards");
  }

  /**
   * The file with its anchors resolved (SnakeYAML, which Jackson's YAML module reads with, does
   * that).
   */
  /** docker-compose.yml as a JSON tree. */
  static JsonNode compose() throws Exception {
    return yaml(COMPOSE);
  }

  private static JsonNode yaml(Path file) throws Exception {
    try (Reader in = Files.newBufferedReader(file)) {
      Object document = new Yaml(new LoaderOptions()).load(in);
      return new ObjectMapper().valueToTree(document);
    }
  }
}
