package io.tally.launcher;

import io.tally.embedded.Ports;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.ThreadLocalRandom;
import org.apache.flink.api.common.JobID;
import org.apache.flink.util.NetUtils;

/**
 * Where the local stack's Flink Prometheus reporter listens. The reporter takes the first free port
 * of its range and does not say which; other processes on the host (another stack, a cluster's
 * TaskManagers) may hold ports of the same range. The one that is ours is the one whose scrape
 * names our job's id.
 */
final class FlinkMetricsEndpoint {

  /**
   * The reporter's factory, named in Flink's configuration as a cluster's {@code config.yaml} names
   * it.
   */
  static final String REPORTER_FACTORY =
      "org.apache.flink.metrics.prometheus.PrometheusReporterFactory";

  private static final int ANY_BLOCK = 8;

  /**
   * Where {@link PortRange#ANY} looks: below Linux's default ephemeral range (32768) and others'.
   */
  private static final int ANY_LOWEST = 20000;

  private static final int ANY_ABOVE = 32000;

  private static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofMillis(500)).build();

  private FlinkMetricsEndpoint() {}

  /**
   * The range the reporter is given: {@link PortRange#ANY} becomes a block of {@value #ANY_BLOCK}
   * ports at a random place below every system's ephemeral range, with a free port in it. A single
   * free port found now could be taken as the local end of an outgoing connection before Flink
   * binds it, leaving the stack without metrics; below the ephemeral range no connection takes one.
   * Any other range must have a free port, or the start fails now, naming the variable that moves
   * it.
   */
  static PortRange reporterPorts(PortRange configured) {
    if (configured.equals(PortRange.ANY)) {
      for (int attempt = 0; attempt < 20; attempt++) {
        int first = ThreadLocalRandom.current().nextInt(ANY_LOWEST, ANY_ABOVE - ANY_BLOCK);
        PortRange block = new PortRange(first, first + ANY_BLOCK - 1);
        if (block.ports().anyMatch(FlinkMetricsEndpoint::bindable)) {
          return block;
        }
      }
      throw new Ports.PortInUseException(
          "no free port for Flink's metrics reporter between "
              + ANY_LOWEST
              + " and "
              + ANY_ABOVE
              + "; set TALLY_FLINK_METRICS_PORTS to a free range");
    }
    if (configured.ports().noneMatch(FlinkMetricsEndpoint::bindable)) {
      throw new Ports.PortInUseException(
          "every port of "
              + configured
              + " for Flink's metrics reporter is in use;"
              + " stop what holds them or set TALLY_FLINK_METRICS_PORTS to another range");
    }
    return configured;
  }

  /**
   * The port of {@code reporterPorts} (the value of Flink's {@code metrics.reporter.prom.port}:
   * ports and ranges, comma-separated) whose scrape names {@code job}, polled until {@code wait}
   * has passed: the job's metrics appear once its JobMaster runs, a moment after submission.
   */
  static OptionalInt find(String reporterPorts, JobID job, Duration wait)
      throws InterruptedException {
    List<Integer> candidates = new ArrayList<>();
    NetUtils.getPortRangeFromString(reporterPorts).forEachRemaining(candidates::add);
    String label = "job_id=\"" + job + "\"";
    long deadline = System.nanoTime() + wait.toNanos();
    do {
      OptionalInt port =
          candidates.stream()
              .mapToInt(Integer::intValue)
              .filter(p -> scrape(p).filter(body -> body.contains(label)).isPresent())
              .findFirst();
      if (port.isPresent()) {
        return port;
      }
      Thread.sleep(250);
    } while (System.nanoTime() < deadline);
    return OptionalInt.empty();
  }

  /** The reporter's text at {@code port} on this host, empty when nothing answers there. */
  static Optional<String> scrape(int port) {
    try {
      HttpResponse<String> answer =
          HTTP.send(
              HttpRequest.newBuilder(URI.create(url(port))).timeout(Duration.ofSeconds(5)).build(),
              HttpResponse.BodyHandlers.ofString());
      return answer.statusCode() == 200 ? Optional.of(answer.body()) : Optional.empty();
    } catch (IOException e) {
      return Optional.empty();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return Optional.empty();
    }
  }

  static String url(int port) {
    return "http://localhost:" + port + "/metrics";
  }

  private static boolean bindable(int port) {
    // The reporter binds every interface; a port taken on any of them is taken for it.
    try (ServerSocket socket = new ServerSocket()) {
      socket.bind(new InetSocketAddress((InetAddress) null, port));
      return true;
    } catch (IOException e) {
      return false;
    }
  }
}
