package io.tally.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Tests the FlinkDeployments in deploy/kubernetes against {@link FlinkDeploymentSchema}, the
 * operator's CRD schema made strict, and that the schema refuses the mistakes it is there to catch.
 */
class FlinkDeploymentSchemaTest {

  private static FlinkDeploymentSchema schema;

  @BeforeAll
  static void loadSchema() {
    schema = FlinkDeploymentSchema.load();
  }

  @Test
  void everyFlinkDeploymentKustomizationAppliesMatchesTheOperatorsSchema() {
    List<JsonNode> deployments =
        Manifests.allKustomized().stream()
            .filter(doc -> "FlinkDeployment".equals(doc.path("kind").asString()))
            .toList();

    assertThat(deployments)
        .extracting(doc -> doc.path("metadata").path("name").asString())
        .containsExactlyInAnyOrder("tally-click-count", "tally-reconcile");
    for (JsonNode deployment : deployments) {
      assertThat(schema.problems(deployment))
          .as(deployment.path("metadata").path("name").asString())
          .isEmpty();
    }
  }

  @Test
  void aMisspelledFieldFails() {
    JsonNode manifest =
        minimal(
            """
              job:
                jarURI: local:///opt/tally/jobs/flink-click-job.jar
                upgradMode: savepoint
            """);

    assertThat(schema.problems(manifest))
        .singleElement()
        .asString()
        .contains("/spec/job")
        .contains("upgradMode");
  }

  @Test
  void aMisspelledFieldDeepInThePodTemplateFails() {
    JsonNode manifest =
        minimal(
            """
              podTemplate:
                spec:
                  containers:
                    - name: flink-main-container
                      env:
                        - name: TALLY_PG_PASSWORD
                          valueFrm:
                            secretKeyRef: {name: tally-postgres, key: password}
            """);

    assertThat(schema.problems(manifest))
        .singleElement()
        .asString()
        .contains("/spec/podTemplate/spec/containers/0/env/0")
        .contains("valueFrm");
  }

  @Test
  void aMisspelledFieldInMetadataFails() {
    ObjectNode manifest = (ObjectNode) minimal("");
    ((ObjectNode) manifest.path("metadata")).putObject("lables").put("app", "tally");

    assertThat(schema.problems(manifest))
        .singleElement()
        .asString()
        .contains("/metadata")
        .contains("lables");
  }

  @Test
  void aValueOutsideAnEnumFails() {
    JsonNode manifest =
        minimal(
            """
              job:
                upgradeMode: savepoints
            """);

    assertThat(schema.problems(manifest))
        .singleElement()
        .asString()
        .contains("/spec/job/upgradeMode");
  }

  @Test
  void aValueOfTheWrongTypeFails() {
    JsonNode manifest =
        minimal(
            """
              job:
                parallelism: four
            """);

    assertThat(schema.problems(manifest))
        .singleElement()
        .asString()
        .contains("/spec/job/parallelism");
  }

  @Test
  void aMissingRequiredFieldFails() {
    ObjectNode manifest = (ObjectNode) minimal("");
    ((ObjectNode) manifest.path("spec")).remove("flinkVersion");

    assertThat(schema.problems(manifest)).singleElement().asString().contains("flinkVersion");
  }

  @Test
  void aManifestWithoutANameFails() {
    ObjectNode manifest = (ObjectNode) minimal("");
    ((ObjectNode) manifest.path("metadata")).remove("name");

    assertThat(schema.problems(manifest)).singleElement().asString().contains("name");
  }

  @Test
  void onlyFlink22IsAddedToTheVersionsTheCrdKnows() {
    assertThat(FlinkDeploymentSchema.crdFlinkVersions())
        .contains("v1_20")
        .doesNotContain(FlinkDeploymentSchema.FLINK_2_2);

    assertThat(schema.problems(minimalWithVersion(FlinkDeploymentSchema.FLINK_2_2))).isEmpty();
    assertThat(schema.problems(minimalWithVersion("v1_20"))).isEmpty();
    assertThat(schema.problems(minimalWithVersion("v2_1")))
        .singleElement()
        .asString()
        .contains("/spec/flinkVersion");
    assertThat(schema.problems(minimalWithVersion("v2_3")))
        .singleElement()
        .asString()
        .contains("/spec/flinkVersion");
  }

  @Test
  void theMinimalManifestTheseTestsBreakIsValid() {
    assertThat(schema.problems(minimal(""))).isEmpty();
  }

  private static JsonNode minimalWithVersion(String flinkVersion) {
    ObjectNode manifest = (ObjectNode) minimal("");
    ((ObjectNode) manifest.path("spec")).put("flinkVersion", flinkVersion);
    return manifest;
  }

  /** A valid FlinkDeployment with the given lines added to its spec (indented by four spaces). */
  private static JsonNode minimal(String moreSpec) {
    return Manifests.parse(
            """
            apiVersion: flink.apache.org/v1beta1
            kind: FlinkDeployment
            metadata:
              name: broken
            spec:
              image: tally-flink-jobs:0.1.0
              flinkVersion: v2_2
              serviceAccount: flink
            """
                + moreSpec)
        .get(0);
  }
}
