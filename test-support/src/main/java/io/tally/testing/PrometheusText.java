package io.tally.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/** A server's Prometheus metrics, read from its {@code /metrics} page in the text format. */
public final class PrometheusText {

  private static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  private PrometheusText() {}

  /**
   * Reads the metrics of the server on {@code port} of this machine: series name (with labels) to
   * value.
   */
  public static Map<String, Double> scrape(int port) {
    try {
      HttpResponse<String> response =
          HTTP.send(
              HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/metrics"))
                  .timeout(Duration.ofSeconds(10))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      return parse(response.body());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** Series name (with labels) to value, leaving out comments and blank lines. */
  public static Map<String, Double> parse(String text) {
    Map<String, Double> values = new HashMap<>();
    for (String line : text.split("\n")) {
      if (line.isBlank() || line.startsWith("#")) {
        continue;
      }
      int space = line.lastIndexOf(' ');
      values.put(line.substring(0, space), Double.parseDouble(line.substring(space + 1)));
    }
    return values;
  }

  /** The sum of every series of {@code name} (all label values). */
  public static double sum(Map<String, Double> metrics, String name) {
    double total = 0;
    for (Map.Entry<String, Double> e : metrics.entrySet()) {
      String key = e.getKey();
      if (key.equals(name) || key.startsWith(name + "{")) {
        total += e.getValue();
      }
    }
    return total;
  }
}
