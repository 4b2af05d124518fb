package io.tally.deploy;

import java.util.LinkedHashMap;
import java.util.Map;
import tools.jackson.databind.JsonNode;

/**
 * The Secrets of secret-template.yaml: each Secret's name, and its keys with their placeholder
 * values.
 */
final class SecretTemplate {

  static final String FILE = "secret-template.yaml";

  private SecretTemplate() {}

  /** Secret name to its keys and placeholder values. */
  static Map<String, Map<String, String>> secrets() {
    Map<String, Map<String, String>> secrets = new LinkedHashMap<>();
    for (JsonNode secret : Manifests.read(FILE)) {
      Map<String, String> keys = new LinkedHashMap<>();
      secret
          .path("stringData")
          .properties()
          .forEach(entry -> keys.put(entry.getKey(), entry.getValue().asString()));
      secrets.put(secret.path("metadata").path("name").asString(), keys);
    }
    return secrets;
  }

  /** One key's placeholder value; fails when the template has no such Secret or key. */
  static String value(String secret, String key) {
    Map<String, String> keys = secrets().get(secret);
    if (keys == null || !keys.containsKey(key)) {
      throw new AssertionError("secret-template.yaml has no key " + key + " in Secret " + secret);
    }
    return keys.get(key);
  }
}
