package io.tally.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.tally.embedded.EmbeddedKafkaBroker;
import io.tally.embedded.EmbeddedPostgresServer;
import io.tally.embedded.Ports;
import io.tally.event.KafkaSecurity;
import io.tally.testing.ContainerProcesses;
import io.tally.testing.PasswordCheckedPostgres;
import io.tally.testing.PrometheusText;
import io.tally.testing.SelfSignedTls;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The Kubernetes manifests' settings run on this machine as the cluster would run them, without a
 * cluster: the Secrets filled in as a user fills secret-template.yaml; what Strimzi makes played by
 * the test (the topics of kafka-topics.yaml, the SCRAM logins of kafka-users.yaml with their ACLs
 * enforced, their Secrets and the cluster CA) on a broker that takes those logins only over TLS;
 * PostgreSQL checking passwords, with the logins tally-logins.sh makes. Then redirect-web's init
 * container migrates, its container starts from the image's entry point with the Deployment's
 * environment and mounted CA, takes a link and its clicks; the click job's FlinkDeployment ({@code
 * entryClass}, {@code args}, pod environment and mounts) counts them, and the reconcile job's runs
 * to its end. Only what a pod network changes is changed: host names become this machine's ports,
 * mounted paths files here, the container ports free ones. A wrong login, variable, flag, ACL or
 * mount fails here. The Flink configuration of the FlinkDeployments (S3, HA, the operator) is the
 * CRD schema check's (FlinkDeploymentSchemaTest); it cannot run here.
 */
class KubernetesRunITCase {

  private static final String STRIMZI_CA_FILE = "ca.p12";
  private static final String UA = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Firefox/128.0";

  @TempDir Path dir;

  /** Secret name to its keys and values: the filled-in template, and what Strimzi makes. */
  private final Map<String, Map<String, String>> secrets = new LinkedHashMap<>();

  private final Map<String, String> hosts = new LinkedHashMap<>();
  private SelfSignedTls tls;

  @Test
  void redirectWebTheClickJobAndReconcileRunWithTheManifestsSettings() throws Exception {
    fillInSecretTemplate();
    tls = SelfSignedTls.create(dir.resolve("tls"));
    ContainerProcesses processes = new ContainerProcesses(dir);
    try (EmbeddedPostgresServer postgres =
            EmbeddedPostgresServer.start(
                dir.resolve("pg"), 0, EmbeddedPostgresServer.Durability.FAST);
        EmbeddedKafkaBroker kafka =
            EmbeddedKafkaBroker.startWithScramOverTls(dir.resolve("kafka"), tls.keyStore())) {
      hosts.put("postgres:5432", "localhost:" + postgres.port());
      hosts.put("tally-kafka-bootstrap:9093", kafka.saslBootstrapServers());
      actAsStrimzi(kafka);
      String ownerPassword = secret("tally-postgres", "owner-password");
      PasswordCheckedPostgres.require(postgres, ownerPassword);
      assertThat(
              processes.run(
                  "logins",
                  List.of("sh", PostgresLogins.SCRIPT.toString()),
                  loginsEnvironment(postgres),
                  120))
          .isZero();

      JsonNode pod =
          Manifests.find("redirect-web.yaml", "Deployment", "redirect-web")
              .path("spec")
              .path("template")
              .path("spec");
      JsonNode init = only(pod.path("initContainers"));
      assertThat(
              processes.run(
                  "schema",
                  imagePaths(strings(init.path("command")), "redirect-web.Dockerfile"),
                  environment(init, pod),
                  120))
          .as("the init container migrates as the schema's owner")
          .isZero();

      JsonNode web = only(pod.path("containers"));
      Map<String, String> webEnv = environment(web, pod);
      int httpPort = Ports.ephemeral();
      int adminPort = Ports.ephemeral();
      webEnv.put("TALLY_HTTP_PORT", String.valueOf(httpPort));
      webEnv.put("TALLY_ADMIN_PORT", String.valueOf(adminPort));
      Process redirectWeb =
          processes.start(
              "redirect-web",
              imagePaths(
                  Dockerfiles.entrypoint("redirect-web.Dockerfile"), "redirect-web.Dockerfile"),
              webEnv);
      Process clickJob = null;
      try {
        String readiness = web.path("readinessProbe").path("httpGet").path("path").asString();
        await("redirect-web ready")
            .atMost(Duration.ofSeconds(90))
            .ignoreExceptions()
            .until(() -> status("http://localhost:" + adminPort + readiness) == 200);
        String base = "http://localhost:" + httpPort;
        String code = createLink(base, writeKey(webEnv.get("TALLY_API_KEYS")));
        // Readiness does not wait for the producer's first metadata over TLS: a click answered
        // before it may be dropped (and counted as such), so click until three are delivered.
        for (int delivered = 0; delivered < 3; ) {
          double before = handedOn(adminPort);
          assertThat(status(base + "/" + code)).isEqualTo(302);
          await("the click delivered or dropped")
              .atMost(Duration.ofSeconds(60))
              .until(() -> handedOn(adminPort) > before);
          delivered = (int) acknowledged(adminPort);
        }
        assertThat(acknowledged(adminPort)).isEqualTo(3);

        clickJob =
            processes.start(
                "click-job",
                flinkJob("click-job.yaml", "tally-click-count"),
                flinkEnvironment("click-job.yaml", "tally-click-count"));
        await("the three clicks counted by the click job as its logins")
            .atMost(Duration.ofSeconds(120))
            .untilAsserted(
                () ->
                    assertThat(
                            count(
                                postgres,
                                ownerPassword,
                                "SELECT COALESCE(sum(clicks), 0) FROM click_counts WHERE code = ?",
                                code))
                        .as(() -> processes.tailOf("click-job"))
                        .isEqualTo(3));
      } finally {
        if (clickJob != null) {
          ContainerProcesses.stop(clickJob);
        }
        ContainerProcesses.stop(redirectWeb);
      }

      assertThat(
              processes.run(
                  "reconcile",
                  flinkJob("reconcile-job.yaml", "tally-reconcile"),
                  flinkEnvironment("reconcile-job.yaml", "tally-reconcile"),
                  240))
          .as("the reconcile job runs to its end as its logins")
          .isZero();
      assertThat(count(postgres, ownerPassword, "SELECT count(*) FROM reconcile_runs", null))
          .isEqualTo(1);

      assertThatThrownBy(() -> produceAs(kafka, "click-job", "clicks"))
          .as("the ACLs hold: only redirect-web writes clicks")
          .hasRootCauseInstanceOf(TopicAuthorizationException.class);
    }
  }

  /** The template's Secrets with every placeholder replaced by a value of its kind. */
  private void fillInSecretTemplate() {
    SecretTemplate.secrets()
        .forEach(
            (name, keys) -> {
              Map<String, String> filled = new LinkedHashMap<>();
              keys.keySet()
                  .forEach(
                      key ->
                          filled.put(
                              key,
                              key.equals("api-keys")
                                  ? "write:" + randomText(32)
                                  : key + "-" + randomText(32)));
              secrets.put(name, filled);
            });
  }

  /**
   * What Strimzi makes from the Kafka resources: the topics (one replica each here), each
   * KafkaUser's SCRAM login with its ACLs and its Secret, and the Secret with the cluster CA.
   */
  private void actAsStrimzi(EmbeddedKafkaBroker kafka) throws Exception {
    List<NewTopic> topics = new ArrayList<>();
    for (JsonNode topic : Manifests.read("kafka-topics.yaml")) {
      Map<String, String> config = new HashMap<>();
      topic
          .path("spec")
          .path("config")
          .properties()
          .forEach(e -> config.put(e.getKey(), e.getValue().asString()));
      config.put("min.insync.replicas", "1");
      topics.add(
          new NewTopic(
                  topic.path("metadata").path("name").asString(),
                  topic.path("spec").path("partitions").asInt(),
                  (short) 1)
              .configs(config));
    }
    kafka.createTopics(topics);

    List<AclBinding> acls = new ArrayList<>();
    for (JsonNode user : Manifests.read("kafka-users.yaml")) {
      String name = user.path("metadata").path("name").asString();
      assertThat(user.path("spec").path("authentication").path("type").asString())
          .isEqualTo("scram-sha-512");
      String password = randomText(24);
      kafka.addScramUser(name, password);
      secrets.put(name, Map.of("password", password));
      for (JsonNode acl : user.path("spec").path("authorization").path("acls")) {
        for (JsonNode operation : acl.path("operations")) {
          acls.add(
              new AclBinding(
                  resource(acl.path("resource")),
                  new AccessControlEntry(
                      "User:" + name,
                      "*",
                      AclOperation.valueOf(constantName(operation.asString())),
                      AclPermissionType.ALLOW)));
        }
      }
    }
    try (Admin admin =
        Admin.create(
            Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()))) {
      admin.createAcls(acls).all().get();
    }
    secrets.put(
        Manifests.KAFKA_CLUSTER_CA,
        Map.of("ca.password", tls.trustStore().password(), STRIMZI_CA_FILE, "(a file)"));
  }

  /** A Strimzi ACL resource: a topic or group by name, or the cluster. */
  private static ResourcePattern resource(JsonNode resource) {
    String type = resource.path("type").asString();
    if (type.equals("cluster")) {
      return new ResourcePattern(ResourceType.CLUSTER, "kafka-cluster", PatternType.LITERAL);
    }
    return new ResourcePattern(
        ResourceType.valueOf(constantName(type)),
        resource.path("name").asString(),
        PatternType.valueOf(constantName(resource.path("patternType").asString("literal"))));
  }

  /** Strimzi's {@code IdempotentWrite} or {@code topic} as Kafka's enum constant names them. */
  private static String constantName(String strimziName) {
    return strimziName.replaceAll("([a-z])([A-Z])", "$1_$2").toUpperCase(Locale.ROOT);
  }

  /** tally-logins.sh's environment, as the operations guide runs it against the server. */
  private Map<String, String> loginsEnvironment(EmbeddedPostgresServer postgres) {
    return Map.of(
        "PGHOST", "localhost",
        "PGPORT", String.valueOf(postgres.port()),
        "PGPASSWORD", secret("tally-postgres", "owner-password"),
        "TALLY_WEB_DB_PASSWORD", secret("tally-postgres", "web-password"),
        "TALLY_JOB_DB_PASSWORD", secret("tally-postgres", "job-password"),
        "TALLY_RECONCILE_DB_PASSWORD", secret("tally-postgres", "reconcile-password"));
  }

  /**
   * The command that starts a FlinkDeployment's job here: its entry class from the jar the image
   * holds, with its args, in a JVM of its own whose Flink runs the job in a MiniCluster.
   */
  private List<String> flinkJob(String file, String name) {
    JsonNode job = Manifests.find(file, "FlinkDeployment", name).path("spec").path("job");
    String jar = job.path("jarURI").asString().replaceFirst("^local://", "");
    List<String> command = new ArrayList<>();
    command.add(javaCommand());
    command.add("-Xmx1g");
    command.addAll(List.of(System.getProperty("flink.jvm.opens", "").trim().split("\\s+")));
    command.add("-cp");
    command.add(
        imagePath(jar, "flink-jobs.Dockerfile")
            + File.pathSeparator
            + System.getProperty("java.class.path"));
    command.add(job.path("entryClass").asString());
    command.addAll(mapped(strings(job.path("args")), mounts(flinkPod(file, name))));
    return command;
  }

  private Map<String, String> flinkEnvironment(String file, String name) {
    JsonNode pod = flinkPod(file, name);
    JsonNode container =
        pod.path("containers")
            .valueStream()
            .filter(c -> c.path("name").asString().equals("flink-main-container"))
            .findFirst()
            .orElseThrow();
    return environment(container, pod);
  }

  private static JsonNode flinkPod(String file, String name) {
    return Manifests.find(file, "FlinkDeployment", name)
        .path("spec")
        .path("podTemplate")
        .path("spec");
  }

  /** A container's environment: values and Secret references filled, hosts and mounts mapped. */
  private Map<String, String> environment(JsonNode container, JsonNode pod) {
    Map<String, String> mounts = mounts(pod, container);
    Map<String, String> environment = new LinkedHashMap<>();
    for (JsonNode variable : container.path("env")) {
      JsonNode ref = variable.path("valueFrom").path("secretKeyRef");
      String value =
          ref.isMissingNode()
              ? variable.path("value").asString()
              : secret(ref.path("name").asString(), ref.path("key").asString());
      environment.put(variable.path("name").asString(), mapped(List.of(value), mounts).get(0));
    }
    return environment;
  }

  private Map<String, String> mounts(JsonNode pod) {
    Map<String, String> all = new LinkedHashMap<>();
    pod.path("containers").forEach(container -> all.putAll(mounts(pod, container)));
    return all;
  }

  /**
   * Each of the container's mount paths and the folder here holding what the pod's volume puts
   * there: a Secret's items as files.
   */
  private Map<String, String> mounts(JsonNode pod, JsonNode container) {
    Map<String, String> mounts = new LinkedHashMap<>();
    for (JsonNode mount : container.path("volumeMounts")) {
      String volumeName = mount.path("name").asString();
      JsonNode secret =
          pod.path("volumes")
              .valueStream()
              .filter(v -> v.path("name").asString().equals(volumeName))
              .findFirst()
              .orElseThrow(() -> new AssertionError("no volume " + volumeName))
              .path("secret");
      Path folder = dir.resolve("volumes").resolve(volumeName);
      try {
        Files.createDirectories(folder);
        for (JsonNode item : secret.path("items")) {
          String secretName = secret.path("secretName").asString();
          String key = item.path("key").asString();
          secret(secretName, key);
          Path file = folder.resolve(item.path("path").asString());
          if (secretName.equals(Manifests.KAFKA_CLUSTER_CA) && key.equals(STRIMZI_CA_FILE)) {
            Files.copy(tls.trustStore().path(), file, StandardCopyOption.REPLACE_EXISTING);
          } else {
            Files.writeString(file, secret(secretName, key));
          }
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      mounts.put(mount.path("mountPath").asString(), folder.toString());
    }
    return mounts;
  }

  /** Values with the pod network's host names and the mounted paths as they are here. */
  private List<String> mapped(List<String> values, Map<String, String> mounts) {
    List<String> out = new ArrayList<>();
    for (String value : values) {
      String result = value;
      for (Map.Entry<String, String> host : hosts.entrySet()) {
        result = result.replace(host.getKey(), host.getValue());
      }
      for (Map.Entry<String, String> mount : mounts.entrySet()) {
        if (result.startsWith(mount.getKey() + "/")) {
          result = mount.getValue() + result.substring(mount.getKey().length());
        }
      }
      out.add(result);
    }
    return out;
  }

  /** An image's command with {@code java} this JVM's and the files it copies as built here. */
  private static List<String> imagePaths(List<String> command, String dockerfile) {
    List<String> out = new ArrayList<>();
    for (String part : command) {
      out.add(part.equals("java") ? javaCommand() : imagePath(part, dockerfile));
    }
    return out;
  }

  /**
   * The built file the image copies to {@code path}, or {@code path} when it copies nothing there.
   */
  private static String imagePath(String path, String dockerfile) {
    for (Map.Entry<String, String> copy : Dockerfiles.copiedFiles(dockerfile).entrySet()) {
      if (copy.getValue().equals(path)) {
        Path built =
            Manifests.FOLDER.toAbsolutePath().getParent().getParent().resolve(copy.getKey());
        assertThat(built).as("%s copies %s", dockerfile, copy.getKey()).exists();
        return built.toString();
      }
    }
    return path;
  }

  private static String javaCommand() {
    return ProcessHandle.current().info().command().orElse("java");
  }

  private String secret(String name, String key) {
    Map<String, String> keys = secrets.get(name);
    assertThat(keys).as("a Secret %s", name).isNotNull();
    assertThat(keys).as("Secret %s", name).containsKey(key);
    return keys.get(key);
  }

  private static String writeKey(String apiKeys) {
    Matcher m = Pattern.compile("write:([^,]+)").matcher(apiKeys);
    assertThat(m.find()).as("a write key in %s", apiKeys).isTrue();
    return m.group(1);
  }

  private static String createLink(String base, String key) throws Exception {
    HttpResponse<String> created =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(URI.create(base + "/api/links"))
                    .header("Authorization", "Bearer " + key)
                    .POST(
                        HttpRequest.BodyPublishers.ofString(
                            "{\"url\":\"https://example.com/kubernetes\"}"))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
    assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
    return JsonMapper.builder().build().readTree(created.body()).path("code").asString();
  }

  private static double acknowledged(int adminPort) {
    return PrometheusText.sum(
        PrometheusText.scrape(adminPort), "tally_click_events_acknowledged_total");
  }

  /** Clicks the publisher is done with: delivered or dropped. */
  private static double handedOn(int adminPort) {
    Map<String, Double> metrics = PrometheusText.scrape(adminPort);
    return PrometheusText.sum(metrics, "tally_click_events_acknowledged_total")
        + PrometheusText.sum(metrics, "tally_click_events_dropped_total");
  }

  private static int status(String url) throws Exception {
    return HttpClient.newHttpClient()
        .send(
            HttpRequest.newBuilder(URI.create(url)).header("User-Agent", UA).build(),
            HttpResponse.BodyHandlers.discarding())
        .statusCode();
  }

  private static long count(
      EmbeddedPostgresServer postgres, String password, String sql, String parameter)
      throws Exception {
    try (Connection c =
            DriverManager.getConnection(postgres.jdbcUrl(), EmbeddedPostgresServer.USER, password);
        PreparedStatement s = c.prepareStatement(sql)) {
      if (parameter != null) {
        s.setString(1, parameter);
      }
      try (ResultSet rs = s.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  /** Writes one record as a KafkaUser, over TLS with its SCRAM login. */
  private void produceAs(EmbeddedKafkaBroker kafka, String user, String topic) throws Exception {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.saslBootstrapServers());
    p.putAll(
        KafkaSecurity.of(
                "SASL_SSL",
                "SCRAM-SHA-512",
                user,
                secret(user, "password"),
                tls.trustStore().path().toString(),
                tls.trustStore().password())
            .clientProperties());
    p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
    p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
    p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 20_000);
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
      producer.send(new ProducerRecord<>(topic, new byte[] {1})).get();
    }
  }

  private static JsonNode only(JsonNode array) {
    assertThat(array.size()).isEqualTo(1);
    return array.get(0);
  }

  private static List<String> strings(JsonNode array) {
    return List.of(Manifests.strings(array));
  }

  private static String randomText(int bytes) {
    byte[] random = new byte[bytes];
    new SecureRandom().nextBytes(random);
    return Base64.getUrlEncoder().withoutPadding().encodeToString(random);
  }
}
