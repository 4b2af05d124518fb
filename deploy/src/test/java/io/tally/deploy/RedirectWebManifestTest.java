package io.tally.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import io.tally.clickjob.ClickJobOptions;
import io.tally.redirect.RedirectWebConfig;
import java.util.AbstractMap;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

/**
 * Tests redirect-web's Deployment and Service against the code: every variable is one
 * RedirectWebConfig reads, the whole environment is a configuration it accepts, and the probes and
 * the Service reach the port it listens on.
 */
class RedirectWebManifestTest {

  /** Read by Log4j itself (the app jar has no log4j2.xml), not by RedirectWebConfig. */
  private static final Set<String> READ_BY_LOG4J = Set.of("LOG4J_LEVEL");

  private static final JsonNode DEPLOYMENT =
      Manifests.find("redirect-web.yaml", "Deployment", "redirect-web");
  private static final JsonNode SERVICE =
      Manifests.find("redirect-web.yaml", "Service", "redirect-web");

  @Test
  void everyVariableIsOneRedirectWebReads() {
    assertThat(unreadVariables(environment().keySet())).isEmpty();
  }

  @Test
  void aMisspelledVariableIsCaught() {
    assertThat(unreadVariables(Set.of("TALLY_PG_PASWORD", "TALLY_PG_PASSWORD")))
        .containsExactly("TALLY_PG_PASWORD");
  }

  @Test
  void theTemplatesPlaceholderSecretsCannotStart() {
    assertThatIllegalArgumentException()
        .isThrownBy(() -> RedirectWebConfig.fromEnv(environment()))
        .withMessageContaining("placeholder");
  }

  @Test
  void theEnvironmentIsAConfigurationRedirectWebAccepts() {
    RedirectWebConfig config = RedirectWebConfig.fromEnv(filledIn());

    assertThat(config.httpPort()).isEqualTo(containerPort("http"));
    assertThat(config.adminPort()).hasValue(containerPort("admin"));
    assertThat(config.trustedProxies())
        .as("behind an ingress, without trusted proxies every visitor is the ingress")
        .isNotEmpty();
  }

  @Test
  void redirectWebWritesWhereTheClickJobReads() {
    RedirectWebConfig config = RedirectWebConfig.fromEnv(filledIn());
    JsonNode clickJob = Manifests.find("click-job.yaml", "FlinkDeployment", "tally-click-count");
    ClickJobOptions job =
        ClickJobOptions.parse(Manifests.strings(clickJob.path("spec").path("job").path("args")));

    assertThat(config.kafkaBootstrap()).isEqualTo(job.bootstrapServers());
    assertThat(config.clickTopic()).isEqualTo(job.topic());
    assertThat(config.jdbcUrl()).isEqualTo(job.connection().jdbcUrl());
    assertThat(PostgresLogins.roles()).containsEntry(config.dbUser(), "tally_redirect_web");
    assertThat(config.migrateSchema()).as("the init container migrates as the owner").isFalse();
  }

  @Test
  void theImageRunsTheAppJarTheBuildMakesOnTheContainersPort() {
    assertThat(Dockerfiles.copiedFiles("redirect-web.Dockerfile").keySet())
        .containsExactly(Dockerfiles.builtJar("redirect-web", "app"));
    assertThat(Dockerfiles.exposedPort("redirect-web.Dockerfile")).isEqualTo(containerPort("http"));
  }

  @Test
  void readinessAsksHealthOnTheAdminPort() {
    JsonNode readiness = container().path("readinessProbe").path("httpGet");

    assertThat(readiness.path("path").asString()).isEqualTo("/health");
    assertThat(portNumber(readiness.path("port"))).isEqualTo(containerPort("admin"));
  }

  @Test
  void livenessAsksAPathThatAnswersWithoutPostgresql() {
    JsonNode liveness = container().path("livenessProbe").path("httpGet");

    assertThat(liveness.path("path").asString()).isEqualTo("/api/openapi.json");
    assertThat(portNumber(liveness.path("port"))).isEqualTo(containerPort("http"));
  }

  @Test
  void theServiceSendsToThePodsPort() {
    Map<String, String> podLabels =
        strings(DEPLOYMENT.path("spec").path("template").path("metadata").path("labels"));
    Map<String, String> selector = strings(SERVICE.path("spec").path("selector"));

    assertThat(podLabels).containsAllEntriesOf(selector);
    assertThat(strings(DEPLOYMENT.path("spec").path("selector").path("matchLabels")))
        .isEqualTo(selector);
    assertThat(
            SERVICE
                .path("spec")
                .path("ports")
                .valueStream()
                .map(port -> portNumber(port.path("targetPort"))))
        .containsExactly(containerPort("http"));
  }

  @Test
  void prometheusScrapesMetricsOnTheAdminPort() {
    JsonNode annotations =
        DEPLOYMENT.path("spec").path("template").path("metadata").path("annotations");

    assertThat(annotations.path("prometheus.io/scrape").asString()).isEqualTo("true");
    assertThat(annotations.path("prometheus.io/path").asString()).isEqualTo("/metrics");
    assertThat(Integer.parseInt(annotations.path("prometheus.io/port").asString()))
        .isEqualTo(containerPort("admin"));
  }

  /** The names among these that RedirectWebConfig.fromEnv never asks for (nor Log4j). */
  private static Set<String> unreadVariables(Set<String> names) {
    Set<String> asked = new TreeSet<>();
    Map<String, String> environment = filledIn();
    // fromEnv asks for each variable it knows, set or not; recording the questions lists them
    // without a copy.
    Map<String, String> recording =
        new AbstractMap<>() {
          @Override
          public String get(Object key) {
            asked.add((String) key);
            return environment.get(key);
          }

          @Override
          public Set<Entry<String, String>> entrySet() {
            return environment.entrySet();
          }
        };
    RedirectWebConfig.fromEnv(recording);
    Set<String> unread = new TreeSet<>(names);
    unread.removeAll(asked);
    unread.removeAll(READ_BY_LOG4J);
    return unread;
  }

  /** The environment as a user runs it: the template's secrets filled in with real ones. */
  private static Map<String, String> filledIn() {
    Map<String, String> environment = new LinkedHashMap<>(environment());
    environment.put("TALLY_API_KEYS", "write:" + "k".repeat(40));
    environment.put("TALLY_IP_HASH_SECRET", "s".repeat(44));
    return environment;
  }

  /** The container's environment, with each Secret reference replaced by the template's value. */
  static Map<String, String> environment() {
    Map<String, String> environment = new LinkedHashMap<>();
    for (JsonNode variable : container().path("env")) {
      JsonNode secret = variable.path("valueFrom").path("secretKeyRef");
      String name = secret.path("name").asString();
      String value =
          secret.isMissingNode()
              ? variable.path("value").asString()
              : Manifests.madeByStrimzi(name)
                  ? "made-by-strimzi"
                  : SecretTemplate.value(name, secret.path("key").asString());
      environment.put(variable.path("name").asString(), value);
    }
    return environment;
  }

  private static JsonNode container() {
    List<JsonNode> containers =
        DEPLOYMENT
            .path("spec")
            .path("template")
            .path("spec")
            .path("containers")
            .valueStream()
            .toList();
    assertThat(containers).hasSize(1);
    return containers.get(0);
  }

  private static int containerPort(String name) {
    return container()
        .path("ports")
        .valueStream()
        .filter(port -> name.equals(port.path("name").asString()))
        .mapToInt(port -> port.path("containerPort").asInt())
        .findFirst()
        .orElseThrow(() -> new AssertionError("no container port named " + name));
  }

  /** A probe's or Service's port: a number, or the name of a container port. */
  private static int portNumber(JsonNode port) {
    return port.isNumber() ? port.asInt() : containerPort(port.asString());
  }

  private static Map<String, String> strings(JsonNode object) {
    Map<String, String> map = new HashMap<>();
    object.properties().forEach(entry -> map.put(entry.getKey(), entry.getValue().asString()));
    return map;
  }
}
