package io.tally.launcher;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tally.embedded.Ports;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * A real Prometheus server (Debian's {@code prometheus} binary) started for a test on a free port:
 * it scrapes the given targets every second and evaluates the given rule file every second. Closing
 * stops it; its data lives in the folder it was given.
 */
final class PrometheusServer implements AutoCloseable {

  static final String INSTALL = "apt-get install -y --no-install-recommends prometheus";
  private static final ObjectMapper JSON = new ObjectMapper();

  private final Process process;
  private final String base;
  private final HttpClient http = HttpClient.newHttpClient();

  private PrometheusServer(Process process, int port) {
    this.process = process;
    this.base = "http://127.0.0.1:" + port;
  }

  /**
   * Starts Prometheus in {@code dir} scraping each job's {@code host:port} targets at {@code
   * /metrics}, with {@code rules} loaded; fails naming the install command when it is missing.
   */
  static PrometheusServer start(Path dir, Map<String, String> targetsByJob, Path rules)
      throws Exception {
    Path binary = Path.of("/usr/bin/prometheus");
    if (!Files.isExecutable(binary)) {
      throw new AssertionError(
          "this test needs Prometheus's server, which is not installed: " + INSTALL);
    }
    String scrapes =
        targetsByJob.entrySet().stream()
            .map(
                job ->
                    "  - job_name: "
                        + job.getKey()
                        + "\n    static_configs:\n      - targets: [\""
                        + job.getValue()
                        + "\"]\n")
            .collect(Collectors.joining());
    Path config =
        Files.writeString(
            dir.resolve("prometheus.yml"),
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                + "rule_files:\n  - "
                + rules.toAbsolutePath()
                + "\nscrape_configs:\n"
                + scrapes);
    int port = Ports.ephemeral();
    Process process =
        new ProcessBuilder(
                List.of(
                    binary.toString(),
                    "--config.file=" + config,
                    "--storage.tsdb.path=" + Files.createDirectories(dir.resolve("data")),
                    "--web.listen-address=127.0.0.1:" + port))
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve("prometheus.log").toFile())
            .start();
    PrometheusServer server = new PrometheusServer(process, port);
    try {
      server.awaitReady(Duration.ofSeconds(30), dir.resolve("prometheus.log"));
      return server;
    } catch (Exception | Error e) {
      server.close();
      throw e;
    }
  }

  private void awaitReady(Duration timeout, Path log) throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) {
        throw new AssertionError("Prometheus exited: " + Files.readString(log));
      }
      try {
        HttpResponse<Void> ready =
            http.send(
                HttpRequest.newBuilder(URI.create(base + "/-/ready")).build(),
                HttpResponse.BodyHandlers.discarding());
        if (ready.statusCode() == 200) {
          return;
        }
      } catch (IOException notYet) {
        // Not listening yet.
      }
      Thread.sleep(200);
    }
    throw new AssertionError(
        "Prometheus not ready within " + timeout + ": " + Files.readString(log));
  }

  /** The series an instant query answers now: {@code data.result} of the HTTP API. */
  JsonNode query(String promql) throws Exception {
    HttpResponse<String> answer =
        http.send(
            HttpRequest.newBuilder(
                    URI.create(
                        base
                            + "/api/v1/query?query="
                            + URLEncoder.encode(promql, StandardCharsets.UTF_8)))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    JsonNode body = JSON.readTree(answer.body());
    if (answer.statusCode() != 200 || !"success".equals(body.path("status").asText())) {
      throw new AssertionError("Prometheus refused " + promql + ": " + answer.body());
    }
    return body.path("data").path("result");
  }

  @Override
  public void close() throws InterruptedException {
    process.destroy();
    if (!process.waitFor(10, TimeUnit.SECONDS)) {
      process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }
  }
}
