package io.tally.launcher;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import io.tally.embedded.Ports;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.apache.flink.api.common.JobID;
import org.junit.jupiter.api.Test;

/**
 * Tests for {@link FlinkMetricsEndpoint}: the reporter's ports checked before the start, and found
 * after it.
 */
class FlinkMetricsEndpointTest {

  @Test
  void aRangeWithEveryPortTakenStopsTheStartNamingTheVariable() throws Exception {
    try (ServerSocket taken = new ServerSocket(0)) {
      PortRange range = new PortRange(taken.getLocalPort(), taken.getLocalPort());

      assertThatThrownBy(() -> FlinkMetricsEndpoint.reporterPorts(range))
          .isInstanceOf(Ports.PortInUseException.class)
          .hasMessageContaining("every port of " + range)
          .hasMessageContaining("TALLY_FLINK_METRICS_PORTS");
    }
  }

  @Test
  void anyBecomesFreePortsBelowTheEphemeralRangeAndARangeWithAFreePortIsKept() {
    PortRange any = FlinkMetricsEndpoint.reporterPorts(PortRange.ANY);
    assertThat(any.first()).isGreaterThanOrEqualTo(20000).isLessThan(any.last());
    assertThat(any.last()).isLessThan(32768);

    int free = Ports.ephemeral();
    PortRange range = new PortRange(free, free);
    assertThat(FlinkMetricsEndpoint.reporterPorts(range)).isEqualTo(range);
  }

  @Test
  void findsThePortWhoseScrapeNamesTheJobAndPassesOverOthers() throws Exception {
    JobID ours = new JobID();
    // Another stack's reporter on the first port of the range, ours on the next.
    HttpServer other = null;
    HttpServer mine = null;
    while (mine == null) {
      other = reporter(0, "flink_jobmanager_job_uptime{job_id=\"" + new JobID() + "\",} 1.0\n");
      try {
        mine =
            reporter(
                other.getAddress().getPort() + 1,
                "flink_jobmanager_job_uptime{job_id=\"" + ours + "\",} 1.0\n");
      } catch (java.io.IOException taken) {
        other.stop(0);
      }
    }
    try {
      PortRange range = new PortRange(other.getAddress().getPort(), mine.getAddress().getPort());

      assertThat(FlinkMetricsEndpoint.find(range.toString(), ours, Duration.ofSeconds(5)))
          .hasValue(mine.getAddress().getPort());
      assertThat(
              FlinkMetricsEndpoint.find(
                  String.valueOf(other.getAddress().getPort()), ours, Duration.ofMillis(300)))
          .isEmpty();
    } finally {
      other.stop(0);
      mine.stop(0);
    }
  }

  private static HttpServer reporter(int port, String body) throws java.io.IOException {
    HttpServer server = HttpServer.create(new InetSocketAddress(port), 0);
    server.createContext(
        "/",
        exchange -> {
          byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
          exchange.sendResponseHeaders(200, bytes.length);
          exchange.getResponseBody().write(bytes);
          exchange.close();
        });
    server.start();
    return server;
  }
}
