package io.tally.local.flink;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Tally's Flink {@code config.yaml} and {@code log4j.properties} (shipped in the {@code
 * flink-cluster} module), written into a folder that a cluster process or the CLI front end reads
 * with {@code --configDir} or {@code FLINK_CONF_DIR}.
 */
public final class FlinkConf {

  /** The environment variable whose {@code key: value} lines override the shipped config.yaml. */
  public static final String PROPERTIES_ENV = "TALLY_FLINK_PROPERTIES";

  private static final String RESOURCES = "/io/tally/flinkcluster/";

  private FlinkConf() {}

  /**
   * Writes the cluster's config into {@code dir}: the shipped config.yaml with its folders under
   * {@code home} and the REST port set, then each of {@code overrides} in place of the line with
   * its key (Flink refuses a key given twice) or appended.
   */
  public static Path writeCluster(
      Path dir, Path home, int restPort, Map<String, String> overrides) {
    String yaml =
        resource("config.yaml")
            .replace("{{home}}", home.toAbsolutePath().toString())
            .replace("{{rest-port}}", String.valueOf(restPort));
    return write(dir, override(yaml, overrides));
  }

  /**
   * Writes what the CLI front end needs to reach the cluster whose REST API is at {@code
   * host:port}.
   */
  public static Path writeClient(Path dir, String host, int port) {
    return write(dir, "rest.address: " + host + "\nrest.port: " + port + "\n");
  }

  /**
   * Reads {@code key: value} lines, as in {@value #PROPERTIES_ENV}; blank lines and {@code #}
   * comments are skipped.
   */
  public static Map<String, String> parseProperties(String lines) {
    Map<String, String> properties = new LinkedHashMap<>();
    if (lines == null) {
      return properties;
    }
    for (String line : lines.split("\n")) {
      String trimmed = line.trim();
      if (trimmed.isEmpty() || trimmed.startsWith("#")) {
        continue;
      }
      int colon = trimmed.indexOf(": ");
      if (colon <= 0) {
        throw new IllegalArgumentException(
            PROPERTIES_ENV + " takes 'key: value' lines, not '" + trimmed + "'");
      }
      properties.put(trimmed.substring(0, colon).trim(), trimmed.substring(colon + 2).trim());
    }
    return properties;
  }

  static String override(String yaml, Map<String, String> overrides) {
    Map<String, String> remaining = new LinkedHashMap<>(overrides);
    List<String> lines = new ArrayList<>();
    for (String line : yaml.split("\n", -1)) {
      int colon = line.indexOf(':');
      String key = line.startsWith("#") || colon < 0 ? null : line.substring(0, colon).trim();
      lines.add(
          key != null && remaining.containsKey(key) ? key + ": " + remaining.remove(key) : line);
    }
    StringBuilder out = new StringBuilder(String.join("\n", lines));
    remaining.forEach((key, value) -> out.append(key).append(": ").append(value).append('\n'));
    return out.toString();
  }

  private static Path write(Path dir, String yaml) {
    try {
      Files.createDirectories(dir);
      Files.writeString(dir.resolve("config.yaml"), yaml);
      Files.writeString(dir.resolve("log4j.properties"), resource("log4j.properties"));
      return dir;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write Flink's configuration into " + dir, e);
    }
  }

  private static String resource(String name) {
    try (InputStream in = FlinkConf.class.getResourceAsStream(RESOURCES + name)) {
      if (in == null) {
        throw new IllegalStateException(
            "no " + RESOURCES + name + " on the classpath (module flink-cluster)");
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
