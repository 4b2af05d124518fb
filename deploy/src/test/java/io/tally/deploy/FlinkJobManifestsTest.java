package io.tally.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tally.clickjob.ClickCountJob;
import io.tally.clickjob.ClickJobOptions;
import io.tally.counting.ConnectionOptions;
import io.tally.reconcile.ReconcileJob;
import io.tally.reconcile.ReconcileOptions;
import io.tally.reconcile.TimeRange;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import tools.jackson.databind.JsonNode;

/**
 * Tests that the two FlinkDeployments start the jobs they name, with flags the jobs' own option
 * parsers accept, and with the settings the runbook relies on (savepoint upgrades, Kubernetes HA,
 * S3, BATCH).
 */
class FlinkJobManifestsTest {

  private static final JsonNode CLICK_JOB =
      Manifests.find("click-job.yaml", "FlinkDeployment", "tally-click-count");
  private static final JsonNode RECONCILE_JOB =
      Manifests.find("reconcile-job.yaml", "FlinkDeployment", "tally-reconcile");

  @Test
  void theClickJobsArgumentsParseWithClickJobOptions() {
    String[] args = Manifests.strings(job(CLICK_JOB).path("args"));

    ClickJobOptions options = ClickJobOptions.parse(args);

    assertThat(options).as("--help or --version in the args").isNotNull();
    assertThat(options.topic()).isEqualTo("clicks");
    assertThat(options.dlqTopic()).isEqualTo("clicks-dlq");
    // Rescaling is spec.job.parallelism alone only while the job takes the cluster's default.
    assertThat(options.parallelism())
        .as("--parallelism would override spec.job.parallelism")
        .isZero();
    assertThat(options.checkpointDir())
        .as("--checkpoint-dir would override execution.checkpointing.dir")
        .isEmpty();
    assertThat(Arrays.asList(args))
        .as("the password comes from the Secret, not the args")
        .noneMatch(arg -> arg.startsWith("--jdbc-password"));
  }

  @Test
  void aMisspelledFlagDoesNotParse() {
    assertThatThrownBy(() -> ClickJobOptions.parse("--topci", "clicks"))
        .isInstanceOf(CommandLine.ParameterException.class);
    assertThatThrownBy(() -> ReconcileOptions.parse("--from", "2h", "--too", "now"))
        .isInstanceOf(CommandLine.ParameterException.class);
  }

  @Test
  void theReconcileJobsArgumentsParseWithReconcileOptions() {
    ReconcileOptions options =
        ReconcileOptions.parse(Manifests.strings(job(RECONCILE_JOB).path("args")));

    assertThat(options).isNotNull();
    assertThat(options.topic()).isEqualTo("clicks");
    assertThat(options.parallelism()).isZero();
    assertThat(options.dryRun()).isFalse();
    TimeRange range = options.range(Instant.parse("2026-12-01T12:00:00Z"));
    assertThat(range.from()).isBefore(range.to());
  }

  @Test
  void bothJobsReadThePostgresPasswordFromTheVariableTheirOptionsFallBackTo()
      throws NoSuchFieldException {
    String fallback =
        ConnectionOptions.class
            .getDeclaredField("jdbcPassword")
            .getAnnotation(CommandLine.Option.class)
            .defaultValue();
    assertThat(fallback).startsWith("${env:").endsWith("}");
    String variable = fallback.substring("${env:".length(), fallback.length() - 1);

    for (JsonNode deployment : List.of(CLICK_JOB, RECONCILE_JOB)) {
      JsonNode env = flinkContainer(deployment).path("env");
      assertThat(env.valueStream().map(entry -> entry.path("name").asString()))
          .as(deployment.path("metadata").path("name").asString())
          .contains(variable);
    }
  }

  @Test
  void bothJobsAgreeOnWhereKafkaAndPostgresqlAre() {
    ClickJobOptions click = ClickJobOptions.parse(Manifests.strings(job(CLICK_JOB).path("args")));
    ReconcileOptions reconcile =
        ReconcileOptions.parse(Manifests.strings(job(RECONCILE_JOB).path("args")));

    assertThat(reconcile.bootstrapServers()).isEqualTo(click.bootstrapServers());
    assertThat(reconcile.topic()).isEqualTo(click.topic());
    assertThat(reconcile.jdbcUrl()).isEqualTo(click.connection().jdbcUrl());
    // Each as a login of its own with its least-privilege role.
    assertThat(PostgresLogins.roles())
        .containsEntry(click.connection().jdbcUser(), "tally_click_job")
        .containsEntry(reconcile.jdbcUser(), "tally_reconcile");
  }

  @Test
  void eachDeploymentStartsItsJobsMainClassFromTheJarTheImageHolds() {
    assertThat(job(CLICK_JOB).path("entryClass").asString())
        .isEqualTo(ClickCountJob.class.getName());
    assertThat(job(RECONCILE_JOB).path("entryClass").asString())
        .isEqualTo(ReconcileJob.class.getName());

    Map<String, String> jarsInImage = Dockerfiles.copiedFiles("flink-jobs.Dockerfile");
    assertThat(jarsInImage).hasSize(2);
    for (JsonNode deployment : List.of(CLICK_JOB, RECONCILE_JOB)) {
      String jarUri = job(deployment).path("jarURI").asString();
      assertThat(jarUri).startsWith("local://");
      assertThat(jarsInImage.values()).contains(jarUri.substring("local://".length()));
      assertThat(jarUri)
          .as("jars under usrlib join every job's class path")
          .doesNotContain("/usrlib/");
    }
  }

  @Test
  void theImageCopiesTheShadedJarsTheBuildMakes() {
    assertThat(Dockerfiles.copiedFiles("flink-jobs.Dockerfile").keySet())
        .containsExactlyInAnyOrder(
            Dockerfiles.builtJar("flink-click-job", "job"),
            Dockerfiles.builtJar("batch-reconcile", "job"));
  }

  @Test
  void theClickJobUpgradesWithSavepointsAndKeepsItsStateAndHaMetadataOnS3() {
    JsonNode config = CLICK_JOB.path("spec").path("flinkConfiguration");

    assertThat(job(CLICK_JOB).path("upgradeMode").asString()).isEqualTo("savepoint");
    assertThat(config.path("state.backend.type").asString()).isEqualTo("rocksdb");
    assertThat(config.path("execution.checkpointing.incremental").asString()).isEqualTo("true");
    assertThat(config.path("high-availability.type").asString()).isEqualTo("kubernetes");
    for (String directory :
        List.of(
            "execution.checkpointing.dir",
            "execution.checkpointing.savepoint-dir",
            "high-availability.storageDir")) {
      assertThat(config.path(directory).asString()).as(directory).startsWith("s3://");
    }
    // The S3 plugin's credential chain reads the keys from these variables.
    assertThat(
            flinkContainer(CLICK_JOB)
                .path("env")
                .valueStream()
                .map(entry -> entry.path("name").asString()))
        .contains("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY");
  }

  @Test
  void theReconcileJobRunsInBatchModeWithoutState() {
    assertThat(
            RECONCILE_JOB
                .path("spec")
                .path("flinkConfiguration")
                .path("execution.runtime-mode")
                .asString())
        .isEqualTo("BATCH");
    assertThat(job(RECONCILE_JOB).path("upgradeMode").asString()).isEqualTo("stateless");
  }

  @Test
  void prometheusScrapesThePortTheReporterListensOn() {
    for (JsonNode deployment : List.of(CLICK_JOB, RECONCILE_JOB)) {
      JsonNode config = deployment.path("spec").path("flinkConfiguration");
      String port = config.path("metrics.reporter.prom.port").asString();

      assertThat(config.path("metrics.reporter.prom.factory.class").asString())
          .isEqualTo("org.apache.flink.metrics.prometheus.PrometheusReporterFactory");
      assertThat(port).matches("\\d+");
      JsonNode annotations =
          deployment.path("spec").path("podTemplate").path("metadata").path("annotations");
      assertThat(annotations.path("prometheus.io/scrape").asString()).isEqualTo("true");
      assertThat(annotations.path("prometheus.io/port").asString()).isEqualTo(port);
      assertThat(
              flinkContainer(deployment)
                  .path("ports")
                  .valueStream()
                  .map(p -> p.path("containerPort").asString()))
          .contains(port);
    }
  }

  private static JsonNode job(JsonNode deployment) {
    return deployment.path("spec").path("job");
  }

  /** The pod template's container the operator merges into Flink's own, by its fixed name. */
  private static JsonNode flinkContainer(JsonNode deployment) {
    return deployment
        .path("spec")
        .path("podTemplate")
        .path("spec")
        .path("containers")
        .valueStream()
        .filter(container -> "flink-main-container".equals(container.path("name").asString()))
        .findFirst()
        .orElseThrow(
            () ->
                new AssertionError(
                    "no flink-main-container in " + deployment.path("metadata").path("name")));
  }
}
