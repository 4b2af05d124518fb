package io.tally.deploy;

import com.networknt.schema.Schema;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.dialect.Dialect;
import com.networknt.schema.dialect.Dialects;
import com.networknt.schema.keyword.NonValidationKeyword;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.List;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;
import tools.jackson.dataformat.yaml.YAMLMapper;

/**
 * The Flink Kubernetes Operator's own schema of a {@code FlinkDeployment} ({@code
 * flink.apache.org/v1beta1}), read from the CRD in the flink-kubernetes-operator-api jar and made
 * strict, so that a manifest the API server would accept but quietly strip (a misspelled field)
 * fails here.
 *
 * <p>Four changes to the CRD's schema, and only these:
 *
 * <ol>
 *   <li>Unknown fields are refused at every level except where the schema says {@code
 *       x-kubernetes-preserve-unknown-fields}: the API server prunes them, so a typo would ship
 *       silently.
 *   <li>The object envelope Kubernetes adds to every custom resource's schema (apiVersion, kind,
 *       the metadata Tally uses) is spelled out, with what Kubernetes requires (apiVersion, kind,
 *       metadata.name).
 *   <li>What the operator's validator refuses to run without is required: {@code
 *       spec.flinkVersion}, {@code spec.serviceAccount}, and a name of at most 45 lower-case
 *       letters, digits and dashes. The CRD itself marks no field required.
 *   <li>{@code flinkVersion} also allows {@code v2_2}; see {@link #FLINK_2_2}.
 * </ol>
 */
final class FlinkDeploymentSchema {

  /**
   * The CRD comes from operator 1.10.0, the newest release served to this build; its {@code
   * flinkVersion} enum ends at {@code v1_20}, because 1.10 predates Flink 2. The manifests are for
   * operator 1.15, which runs Flink 2.2, so exactly this one value is added to exactly that one
   * field. Every other value outside the 1.10 enum still fails.
   */
  static final String FLINK_2_2 = "v2_2";

  private static final String CRD = "META-INF/fabric8/flinkdeployments.flink.apache.org-v1.yml";
  private static final String VERSION = "v1beta1";
  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

  private final Schema schema;

  private FlinkDeploymentSchema(Schema schema) {
    this.schema = schema;
  }

  /** The strict schema built from the CRD on the test class path. */
  static FlinkDeploymentSchema load() {
    ObjectNode openApi =
        (ObjectNode) crdVersion(readCrd()).path("schema").path("openAPIV3Schema").deepCopy();
    allowFlink22(openApi);
    addEnvelope(openApi);
    requireWhatTheOperatorRequires(openApi);
    forbidUnknownFields(openApi);
    // A CRD's openAPIV3Schema is OpenAPI 3.0's schema dialect; the x-kubernetes-* markers are the
    // API server's.
    Dialect dialect =
        Dialect.builder(Dialects.getOpenApi30())
            .keyword(new NonValidationKeyword("x-kubernetes-int-or-string"))
            .keyword(new NonValidationKeyword("x-kubernetes-preserve-unknown-fields"))
            .build();
    return new FlinkDeploymentSchema(SchemaRegistry.withDefaultDialect(dialect).getSchema(openApi));
  }

  /** The flinkVersion values the 1.10 CRD itself lists, before {@link #FLINK_2_2} is added. */
  static List<String> crdFlinkVersions() {
    return List.of(
        Manifests.strings(
            flinkVersionEnum(crdVersion(readCrd()).path("schema").path("openAPIV3Schema"))));
  }

  /**
   * What is wrong with a manifest, one line per problem: where, and what; empty when it is valid.
   */
  List<String> problems(JsonNode manifest) {
    return schema.validate(manifest).stream()
        .map(error -> error.getInstanceLocation() + ": " + error.getMessage())
        .toList();
  }

  private static JsonNode readCrd() {
    try (InputStream in = FlinkDeploymentSchema.class.getClassLoader().getResourceAsStream(CRD)) {
      if (in == null) {
        throw new IllegalStateException(
            CRD + " is not on the class path: is flink-kubernetes-operator-api a test dependency?");
      }
      return new YAMLMapper().readTree(in);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static JsonNode crdVersion(JsonNode crd) {
    for (JsonNode version : crd.path("spec").path("versions")) {
      if (VERSION.equals(version.path("name").asString())) {
        return version;
      }
    }
    throw new IllegalStateException("the CRD has no version " + VERSION);
  }

  private static JsonNode flinkVersionEnum(JsonNode openApi) {
    return openApi
        .path("properties")
        .path("spec")
        .path("properties")
        .path("flinkVersion")
        .path("enum");
  }

  private static void allowFlink22(ObjectNode openApi) {
    ArrayNode versions = (ArrayNode) flinkVersionEnum(openApi);
    for (JsonNode version : versions) {
      if (FLINK_2_2.equals(version.asString())) {
        throw new IllegalStateException(
            "the CRD lists " + FLINK_2_2 + " itself now: drop FlinkDeploymentSchema's allowance");
      }
    }
    versions.add(FLINK_2_2);
  }

  private static void addEnvelope(ObjectNode openApi) {
    ObjectNode properties = (ObjectNode) openApi.path("properties");
    properties.set("apiVersion", constant("flink.apache.org/" + VERSION));
    properties.set("kind", constant("FlinkDeployment"));
    ObjectNode metadata = properties.putObject("metadata").put("type", "object");
    ObjectNode fields = metadata.putObject("properties");
    fields.set(
        "name",
        NODES
            .objectNode()
            .put("type", "string")
            // The operator's validator: its resource names become Kubernetes service and label
            // names.
            .put("pattern", "^[a-z]([-a-z0-9]*[a-z0-9])?$")
            .put("maxLength", 45));
    fields.set("namespace", NODES.objectNode().put("type", "string"));
    fields.set("labels", stringMap());
    fields.set("annotations", stringMap());
    metadata.putArray("required").add("name");
    openApi.putArray("required").add("apiVersion").add("kind").add("metadata").add("spec");
  }

  private static void requireWhatTheOperatorRequires(ObjectNode openApi) {
    ((ObjectNode) openApi.path("properties").path("spec"))
        .putArray("required")
        .add("flinkVersion")
        .add("serviceAccount");
  }

  private static ObjectNode constant(String value) {
    ObjectNode node = NODES.objectNode().put("type", "string");
    node.putArray("enum").add(value);
    return node;
  }

  private static ObjectNode stringMap() {
    ObjectNode node = NODES.objectNode().put("type", "object");
    node.putObject("additionalProperties").put("type", "string");
    return node;
  }

  /**
   * Refuses properties the schema does not name, recursively, where the schema does not preserve
   * unknown ones.
   */
  private static void forbidUnknownFields(JsonNode node) {
    if (!(node instanceof ObjectNode schemaNode)) {
      return;
    }
    boolean preservesUnknown =
        schemaNode.path("x-kubernetes-preserve-unknown-fields").asBoolean(false);
    boolean isObject =
        "object".equals(schemaNode.path("type").asString("")) || schemaNode.has("properties");
    if (isObject && !preservesUnknown && !schemaNode.has("additionalProperties")) {
      schemaNode.put("additionalProperties", false);
    }
    schemaNode.path("properties").forEach(FlinkDeploymentSchema::forbidUnknownFields);
    forbidUnknownFields(schemaNode.get("items"));
    forbidUnknownFields(schemaNode.get("additionalProperties"));
    forbidUnknownFields(schemaNode.get("not"));
    for (String combination : List.of("allOf", "anyOf", "oneOf")) {
      schemaNode.path(combination).forEach(FlinkDeploymentSchema::forbidUnknownFields);
    }
  }
}
