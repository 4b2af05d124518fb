package io.tally.bench.redirect;

import io.tally.bench.support.BenchStack;
import io.tally.redirect.RedirectWebConfig;
import io.tally.redirect.RedirectWebServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** The links the redirect benchmarks ask for, and redirect-web servers started on the benchmark's stack. */
public final class RedirectFixture {

  static final String HOT_CODE = "hotlink";
  static final String CLICK_TOPIC = "clicks";
  private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  private RedirectFixture() {}

  /** The codes of the spread workload: {@code z0000}, {@code z0001}, ... */
  static List<String> spreadCodes(int links) {
    List<String> codes = new ArrayList<>(links);
    for (int i = 0; i < links; i++) {
      codes.add(String.format(Locale.ROOT, "z%04d", i));
    }
    return codes;
  }

  /** Inserts the hot link and the spread links (straight into the table: the API is not what is measured). */
  public static void createLinks(BenchStack stack, List<String> spread) throws SQLException {
    try (Connection c = stack.connect();
        PreparedStatement ps = c.prepareStatement("INSERT INTO links (code, url) VALUES (?, ?) ON CONFLICT (code) DO NOTHING")) {
      c.setAutoCommit(false);
      List<String> all = new ArrayList<>(spread);
      all.add(HOT_CODE);
      for (String code : all) {
        ps.setString(1, code);
        ps.setString(2, "https://example.com/articles/" + code + "?utm_source=tally-bench");
        ps.addBatch();
      }
      ps.executeBatch();
      c.commit();
    }
  }

  public static RedirectWebServer start(BenchStack stack, CountingMode mode) {
    return start(stack, mode, Map.of());
  }

  /** A server on the stack with {@code extraEnv} on top of the benchmark's settings (e.g. trusted proxies). */
  public static RedirectWebServer start(BenchStack stack, CountingMode mode, Map<String, String> extraEnv) {
    Map<String, String> env = new HashMap<>();
    env.put("TALLY_HTTP_PORT", "0");
    env.put("TALLY_PG_URL", stack.jdbcUrl());
    env.put("TALLY_PG_USER", stack.dbUser());
    env.put("TALLY_PG_PASSWORD", "");
    env.put("TALLY_KAFKA_BOOTSTRAP", stack.bootstrapServers());
    env.put("TALLY_CLICK_TOPIC", CLICK_TOPIC);
    env.put("TALLY_API_KEYS", "bench-api-key");
    env.put("TALLY_IP_HASH_SECRET", "bench-ip-hash-secret-0123456789");
    env.putAll(extraEnv);
    return mode.start(RedirectWebConfig.fromEnv(env));
  }

  /** Reads the server's Prometheus metrics: series name (with labels) to value. */
  public static Map<String, Double> metrics(int port) {
    try {
      HttpResponse<String> response = HTTP.send(
          HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/metrics")).timeout(Duration.ofSeconds(10)).build(),
          HttpResponse.BodyHandlers.ofString());
      Map<String, Double> values = new HashMap<>();
      for (String line : response.body().split("\n")) {
        if (line.isBlank() || line.startsWith("#")) {
          continue;
        }
        int space = line.lastIndexOf(' ');
        values.put(line.substring(0, space), Double.parseDouble(line.substring(space + 1)));
      }
      return values;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
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

  /** The drop counts by reason, as {@code reason=count, ...}, leaving out reasons with no drop. */
  static String dropsByReason(Map<String, Double> metrics) {
    StringBuilder s = new StringBuilder();
    metrics.entrySet().stream()
        .filter(e -> e.getKey().startsWith("tally_click_events_dropped_total{") && e.getValue() > 0)
        .sorted(Map.Entry.comparingByKey())
        .forEach(e -> {
          String key = e.getKey();
          int at = key.indexOf("reason=\"");
          String reason = at < 0 ? key : key.substring(at + 8, key.indexOf('"', at + 8));
          s.append(s.length() == 0 ? "" : ", ").append(reason).append('=').append(String.format(Locale.ROOT, "%.0f", e.getValue()));
        });
    return s.length() == 0 ? "none" : s.toString();
  }
}
