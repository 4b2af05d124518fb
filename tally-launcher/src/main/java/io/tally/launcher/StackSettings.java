package io.tally.launcher;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Where the local stack listens and keeps its data, from environment variables with defaults.
 *
 * @param home the data folder ({@code TALLY_HOME}, default {@code ./.tally})
 * @param httpPort redirect-web ({@code TALLY_HTTP_PORT}, default 8080)
 * @param flinkUiPort Flink web UI ({@code TALLY_FLINK_UI_PORT}, default 8081)
 * @param kafkaPort Kafka broker ({@code TALLY_KAFKA_PORT}, default 9092)
 * @param pgPort embedded PostgreSQL ({@code TALLY_PG_PORT}, default 5432)
 * @param flinkMetricsPorts where Flink's Prometheus reporter may listen, the first free port of the
 *     range ({@code TALLY_FLINK_METRICS_PORTS}, default 9250-9260)
 * @param externalPgUrl an external PostgreSQL to use instead ({@code TALLY_PG_URL}, JDBC URL)
 * @param pgUser user for the external PostgreSQL ({@code TALLY_PG_USER})
 * @param pgPassword password for the external PostgreSQL ({@code TALLY_PG_PASSWORD})
 * @param apiKey the API key for the links API ({@code TALLY_API_KEY}); made and kept in the home
 *     folder when unset
 */
public record StackSettings(
    Path home,
    int httpPort,
    int flinkUiPort,
    int kafkaPort,
    int pgPort,
    PortRange flinkMetricsPorts,
    Optional<String> externalPgUrl,
    String pgUser,
    String pgPassword,
    Optional<String> apiKey) {

  /**
   * Eleven ports: a JobManager and TaskManagers of a cluster on the same host fit beside the local
   * stack.
   */
  public static final PortRange DEFAULT_FLINK_METRICS_PORTS = new PortRange(9250, 9260);

  /**
   * Where a running {@code ./tally up} leaves its settings for the commands of other shells: in the
   * default data folder, so that they find it without {@code TALLY_HOME}. Removed when it stops.
   */
  public static final Path RUNNING = Path.of(".tally", "running.env");

  /** Where the API key is kept when {@code TALLY_API_KEY} does not give it. */
  public Path apiKeyFile() {
    return home.resolve("api-key");
  }

  /** Where the read-only API key is kept. */
  public Path readApiKeyFile() {
    return home.resolve("read-api-key");
  }

  /**
   * The settings of a command run beside a stack ({@code counts}, {@code reconcile}, {@code
   * flink}): each variable from the environment when set there, else as the running {@code ./tally
   * up} left it in {@code running}, else its default.
   */
  public static StackSettings beside(Map<String, String> env, Path running) {
    if (!Files.isRegularFile(running)) {
      return fromEnv(env);
    }
    List<String> lines;
    try {
      lines = Files.readAllLines(running, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the running stack's settings in " + running, e);
    }
    Map<String, String> merged = new HashMap<>();
    for (String line : lines) {
      int equals = line.indexOf('=');
      if (equals > 0) {
        merged.put(line.substring(0, equals), line.substring(equals + 1));
      }
    }
    env.forEach(
        (name, value) -> {
          if (!value.isBlank()) {
            merged.put(name, value);
          }
        });
    return fromEnv(merged);
  }

  /**
   * These settings as {@code NAME=value} lines for {@link #beside}: where the stack listens and
   * keeps its data. Passwords and keys stay out; the keys are kept in the data folder.
   */
  public List<String> asVariables() {
    List<String> lines = new ArrayList<>();
    lines.add("TALLY_HOME=" + home);
    lines.add("TALLY_HTTP_PORT=" + httpPort);
    lines.add("TALLY_FLINK_UI_PORT=" + flinkUiPort);
    lines.add("TALLY_KAFKA_PORT=" + kafkaPort);
    lines.add("TALLY_PG_PORT=" + pgPort);
    lines.add("TALLY_FLINK_METRICS_PORTS=" + flinkMetricsPorts);
    externalPgUrl.ifPresent(url -> lines.add("TALLY_PG_URL=" + url));
    lines.add("TALLY_PG_USER=" + pgUser);
    return lines;
  }

  /**
   * Leaves these settings in {@code running} for the commands of other shells ({@link #beside}).
   */
  public void leaveIn(Path running) throws IOException {
    Files.createDirectories(running.toAbsolutePath().getParent());
    Files.write(running, asVariables(), StandardCharsets.UTF_8);
  }

  /**
   * Removes what {@link #leaveIn} left in {@code running}, unless another {@code ./tally up} has
   * left its own there since.
   */
  public void takeBackFrom(Path running) throws IOException {
    if (Files.isRegularFile(running)
        && Files.readAllLines(running, StandardCharsets.UTF_8).equals(asVariables())) {
      Files.delete(running);
    }
  }

  public static StackSettings fromEnv(Map<String, String> env) {
    return new StackSettings(
        Path.of(env.getOrDefault("TALLY_HOME", ".tally")).toAbsolutePath().normalize(),
        port(env, "TALLY_HTTP_PORT", 8080),
        port(env, "TALLY_FLINK_UI_PORT", 8081),
        port(env, "TALLY_KAFKA_PORT", 9092),
        port(env, "TALLY_PG_PORT", 5432),
        nonBlank(env.get("TALLY_FLINK_METRICS_PORTS"))
            .map(ports -> PortRange.parse(ports, "TALLY_FLINK_METRICS_PORTS"))
            .orElse(DEFAULT_FLINK_METRICS_PORTS),
        nonBlank(env.get("TALLY_PG_URL")),
        env.getOrDefault("TALLY_PG_USER", "postgres"),
        env.getOrDefault("TALLY_PG_PASSWORD", ""),
        nonBlank(env.get("TALLY_API_KEY")));
  }

  private static Optional<String> nonBlank(String value) {
    return Optional.ofNullable(value).filter(v -> !v.isBlank());
  }

  private static int port(Map<String, String> env, String name, int fallback) {
    String value = env.get(name);
    if (value == null || value.isBlank()) {
      return fallback;
    }
    try {
      int port = Integer.parseInt(value.trim());
      if (port < 0 || port > 65535) {
        throw new NumberFormatException();
      }
      return port;
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          name + " must be a port number (0-65535), not '" + value + "'");
    }
  }

  Path pgData() {
    return home.resolve("postgres");
  }

  Path kafkaData() {
    return home.resolve("kafka");
  }

  Path checkpoints() {
    return home.resolve("checkpoints");
  }

  Path tmp() {
    return home.resolve("tmp");
  }

  Path logs() {
    return home.resolve("logs");
  }
}
