package io.tally.launcher;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.tally.clickjob.ClickCountJob;
import io.tally.embedded.Ports;
import io.tally.event.ClickEvent;
import io.tally.local.ClickTopics;
import io.tally.local.FlinkRest;
import io.tally.local.LocalServices;
import io.tally.local.RestEndpoint;
import io.tally.local.flink.FlinkCli;
import io.tally.local.flink.FlinkInstall;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.JobStatus;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.config.ConfigResource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * The click job's life on the standalone cluster that {@code ./tally up --cluster} runs (a
 * JobManager and two TaskManagers, each a JVM of its own, the job submitted with Flink's CLI from
 * its shaded jar): a savepoint, a stop with a savepoint, a start from it at twice the parallelism
 * with duplicates of the clicks before it replayed, and a TaskManager killed with {@code kill -9}
 * while clicks arrive. Every click is counted once: the dedup set survived the savepoint and the
 * rescale, and the restart after the kill. With the job holding the last TaskManager's slots,
 * {@code reconcile --cluster} refuses at once rather than wait for a slot. Flink's REST API reports
 * the job, its vertices, their backpressure and the Kafka source's lag.
 */
class StandaloneClusterITCase {

  @TempDir Path home;

  private String bootstrap;
  private String jdbcUrl;
  private int markers;

  @Test
  // A recount that waited for a slot would wait forever (see the refusal below): fail the build
  // instead.
  @Timeout(value = 10, unit = TimeUnit.MINUTES)
  void savepointRescaleAndAKilledTaskManagerNeitherLoseNorDoubleAClick() throws Exception {
    FlinkInstall install = FlinkInstall.fromSystemProperties();
    // Each process's Prometheus reporter on a port of its own, clear of any stack running beside
    // the test.
    String promPorts =
        String.join(
            ",", IntStream.range(0, 3).mapToObj(i -> String.valueOf(Ports.ephemeral())).toList());
    LocalStack.ClusterMode mode =
        new LocalStack.ClusterMode(
            install,
            1,
            Map.of("metrics.reporter.prom.port", promPorts),
            LocalServices.Topology.CLUSTER);
    try (LocalStack stack = LocalStack.startOnCluster(settings(), mode, false);
        FlinkRest flink = FlinkRest.connect(stack.cluster().orElseThrow().endpoint())) {
      bootstrap = stack.kafkaBootstrap();
      jdbcUrl = stack.jdbcUrl();
      assertReplicated(bootstrap, jdbcUrl);
      RestEndpoint endpoint = flink.endpoint();
      String code =
          new LinkClient(stack.redirectUrl(), stack.apiKey())
              .createLink("https://example.com/lifecycle");

      JobID first = JobID.fromHexString(stack.clickJobId());
      assertThat(flink.activeJob(ClickCountJob.JOB_NAME))
          .hasValueSatisfying(job -> assertThat(job.getJobId()).isEqualTo(first));
      List<ClickEvent> beforeSavepoint = StackProbe.humanClicksNow(code, 20);
      StackProbe.sendOverEveryPartition(bootstrap, beforeSavepoint);
      awaitAllCounted(code, 20);

      String savepoint = flink.savepoint(first, Optional.empty());
      assertThat(Path.of(URI.create(savepoint)).resolve("_metadata"))
          .as("savepoint %s", savepoint)
          .isRegularFile();
      assertThat(flink.status(first))
          .as("a savepoint leaves the job running")
          .isEqualTo(JobStatus.RUNNING);
      String stoppedAt = flink.stopWithSavepoint(first, Optional.empty());
      assertThat(flink.status(first)).isEqualTo(JobStatus.FINISHED);

      // While no job runs: every click before the savepoint again (a producer's retries, a replay),
      // and new ones.
      StackProbe.sendOverEveryPartition(bootstrap, beforeSavepoint);
      StackProbe.sendOverEveryPartition(bootstrap, StackProbe.humanClicksNow(code, 10));
      List<String> flags =
          new ArrayList<>(LocalStack.clickJobFlags(bootstrap, jdbcUrl, stack.settings()));
      flags.addAll(List.of("--parallelism", "2"));
      JobID second =
          new FlinkCli(install, endpoint, home.resolve("flink").resolve("cli"))
              .runDetached(
                  new FlinkCli.Submission(
                      install.clickJobJar(), flags, Optional.of(stoppedAt), false));
      awaitRunning(endpoint, second);
      assertThat(StackProbe.restoredCheckpoint(endpoint.url()))
          .as("restored the stop's savepoint")
          .hasValueSatisfying(
              path ->
                  assertThat(URI.create(path).getPath())
                      .isEqualTo(URI.create(stoppedAt).getPath()));
      JsonNode job = StackProbe.get(endpoint.url() + "/jobs/" + second);
      assertThat(job.get("name").asText()).isEqualTo(ClickCountJob.JOB_NAME);
      assertThat(job.get("vertices"))
          .extracting(v -> v.get("name").asText())
          .anySatisfy(name -> assertThat(name).contains("Drop duplicate click ids"));
      JsonNode dedup = vertex(job, "Drop duplicate click ids");
      assertThat(dedup.get("parallelism").asInt()).as("rescaled").isEqualTo(2);
      awaitAllCounted(code, 30);

      // Which TaskManager runs the source's subtasks: the one to kill.
      JsonNode source = vertex(job, "Click topic");
      String victim =
          StackProbe.get(
                  endpoint.url()
                      + "/jobs/"
                      + second
                      + "/vertices/"
                      + source.get("id").asText()
                      + "/taskmanagers")
              .get("taskmanagers")
              .get(0)
              .get("taskmanager-id")
              .asText();
      StackProbe.sendOverEveryPartition(bootstrap, StackProbe.humanClicksNow(code, 10));
      Process killed = stack.cluster().orElseThrow().taskManagers().get(victim);
      killed.destroyForcibly();
      assertThat(killed.waitFor()).as("%s killed with SIGKILL", victim).isEqualTo(137);
      StackProbe.sendOverEveryPartition(bootstrap, StackProbe.humanClicksNow(code, 10));
      awaitAllCounted(code, 50);
      assertThat(
              StackProbe.get(
                      endpoint.url()
                          + "/jobs/"
                          + second
                          + "/vertices/"
                          + source.get("id").asText()
                          + "/taskmanagers")
                  .get("taskmanagers"))
          .extracting(tm -> tm.get("taskmanager-id").asText())
          .doesNotContain(victim);

      // One TaskManager left, its two slots held by the job: a recount on the cluster would wait
      // for a slot that never comes free, so it must refuse at once.
      await("the killed TaskManager gone from the cluster")
          .atMost(Duration.ofSeconds(60))
          .pollInterval(Duration.ofMillis(500))
          .until(() -> flink.overview().getNumTaskManagersConnected() == 1);
      StringWriter err = new StringWriter();
      CommandLine tally = TallyCommand.commandLine();
      tally.setErr(new PrintWriter(err, true));
      int exit =
          tally.execute(
              "reconcile",
              "--cluster",
              "--rest",
              endpoint.toString(),
              "--from",
              "1h",
              "--to",
              "now",
              "--dry-run",
              "--bootstrap-servers",
              bootstrap,
              "--jdbc-url",
              jdbcUrl,
              "--jdbc-user",
              "postgres",
              "--jdbc-password",
              "");
      assertThat(exit).isEqualTo(1);
      assertThat(err.toString())
          .startsWith(
              "tally: no free task slot on the Flink cluster at " + endpoint + " (all 2 taken");

      // What an operator reads in the web UI: per vertex backpressure, and the source's lag (caught
      // up now).
      for (JsonNode vertex : job.get("vertices")) {
        JsonNode backpressure =
            await("backpressure of " + vertex.get("name").asText())
                .atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(500))
                .until(
                    () ->
                        StackProbe.get(
                            endpoint.url()
                                + "/jobs/"
                                + second
                                + "/vertices/"
                                + vertex.get("id").asText()
                                + "/backpressure"),
                    answer -> answer.path("status").asText().equals("ok"));
        assertThat(backpressure.get("backpressure-level").asText()).isIn("ok", "low", "high");
        assertThat(backpressure.get("subtasks")).hasSize(vertex.get("parallelism").asInt());
      }
      String lagUrl =
          endpoint.url()
              + "/jobs/"
              + second
              + "/vertices/"
              + source.get("id").asText()
              + "/subtasks/metrics?get="
              + sourceMetric(endpoint, second, source, ".pendingRecords");
      JsonNode lag =
          await("the source's pendingRecords")
              .atMost(Duration.ofSeconds(30))
              .pollInterval(Duration.ofMillis(500))
              .until(
                  () -> StackProbe.get(lagUrl),
                  answer -> answer.size() == 1 && answer.get(0).has("max"));
      assertThat(lag.get(0).get("max").asDouble())
          .as("records behind the end of the topic")
          .isZero();
    }
  }

  /**
   * Three brokers hold every click partition, two needed in sync; PostgreSQL's standby takes every
   * commit before it returns.
   */
  private static void assertReplicated(String bootstrap, String jdbcUrl) throws Exception {
    assertThat(bootstrap.split(",")).hasSize(3);
    try (Admin admin =
        Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
      TopicDescription clicks =
          admin
              .describeTopics(List.of(ClickTopics.CLICKS))
              .allTopicNames()
              .get()
              .get(ClickTopics.CLICKS);
      assertThat(clicks.partitions()).allSatisfy(p -> assertThat(p.isr()).hasSize(3));
      ConfigResource topic = new ConfigResource(ConfigResource.Type.TOPIC, ClickTopics.CLICKS);
      assertThat(
              admin
                  .describeConfigs(List.of(topic))
                  .all()
                  .get()
                  .get(topic)
                  .get("min.insync.replicas")
                  .value())
          .isEqualTo("2");
    }
    assertThat(jdbcUrl).contains("targetServerType=primary");
    try (Connection c = DriverManager.getConnection(jdbcUrl, "postgres", "");
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming' AND sync_state"
                    + " = 'sync'")) {
      rs.next();
      assertThat(rs.getInt(1)).as("synchronous standbys streaming").isEqualTo(1);
    }
  }

  private StackSettings settings() {
    return new StackSettings(
        home,
        0,
        0,
        0,
        0,
        PortRange.ANY,
        Optional.empty(),
        "postgres",
        "",
        Optional.of("test-api-key-0123456789abcdefghijklm"));
  }

  private static JsonNode vertex(JsonNode job, String namePart) {
    for (JsonNode vertex : job.get("vertices")) {
      if (vertex.get("name").asText().contains(namePart)) {
        return vertex;
      }
    }
    throw new AssertionError("no vertex named like '" + namePart + "' in " + job.get("vertices"));
  }

  /**
   * The id of a metric of the source vertex ending in {@code suffix}, such as {@code
   * Source__Click_topic.pendingRecords}.
   */
  private static String sourceMetric(
      RestEndpoint endpoint, JobID job, JsonNode source, String suffix) throws Exception {
    String url =
        endpoint.url()
            + "/jobs/"
            + job
            + "/vertices/"
            + source.get("id").asText()
            + "/subtasks/metrics";
    return await("a source metric ending in " + suffix)
        .atMost(Duration.ofSeconds(30))
        .pollInterval(Duration.ofMillis(500))
        .until(
            () -> {
              for (JsonNode metric : StackProbe.get(url)) {
                if (metric.get("id").asText().endsWith(suffix)) {
                  return Optional.of(metric.get("id").asText());
                }
              }
              return Optional.<String>empty();
            },
            Optional::isPresent)
        .orElseThrow();
  }

  private static void awaitRunning(RestEndpoint endpoint, JobID job) {
    await("job " + job + " running")
        .atMost(Duration.ofSeconds(60))
        .pollInterval(Duration.ofMillis(500))
        .until(
            () ->
                StackProbe.get(endpoint.url() + "/jobs/" + job)
                    .get("state")
                    .asText()
                    .equals("RUNNING"));
  }

  /**
   * Waits until the job has counted every click written so far (a bot click in every partition,
   * after them: once those are counted, so is everything before them), then checks the human total.
   */
  private void awaitAllCounted(String code, long expected) throws Exception {
    markers += StackProbe.botClickInEveryPartition(bootstrap, code);
    await("every click up to the markers counted")
        .atMost(Duration.ofSeconds(150))
        .pollInterval(Duration.ofSeconds(1))
        .until(() -> StackProbe.minuteTotal(jdbcUrl, code, "bot_clicks") == markers);
    assertThat(StackProbe.minuteTotal(jdbcUrl, code, "clicks"))
        .as("human clicks, each once")
        .isEqualTo(expected);
  }
}
