package io.tally.launcher;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The walking skeleton on real parts, started the way {@code ./tally up} starts it: a link created
 * over HTTP, followed N times, shows N clicks in PostgreSQL with no further traffic; after a stop
 * and a start on the same data the counts are still there, the job restores the checkpoint that
 * holds the clicks (Flink says so: a start without state would count the same, since it rereads the
 * day), and new clicks are added without losing or doubling the old ones. On the way, it holds the
 * shipped dashboard and alert rules against what the stack publishes: once clicks, a duplicate, a
 * malformed record and a late click have gone through, every metric and label value they select is
 * in the scrape of Flink's Prometheus reporter or of redirect-web's {@code /metrics}.
 */
class EndToEndITCase {

  private static final Pattern TOTAL = Pattern.compile("(?m)^total  (\\d+)  (\\d+)$");

  @TempDir Path home;

  @Test
  void clicksFollowedOverHttpAreCountedInPostgresAndSurviveARestart() throws Exception {
    String code;
    try (LocalStack stack = LocalStack.start(settings())) {
      code = client(stack).createLink("https://example.com/end-to-end");
      client(stack).follow(code, 7);

      awaitTotal(stack, code, 7);
      theDashboardAndAlertsSelectOnlyPublishedSeries(stack);
      assertThat(stack.resumedFrom()).isEmpty();
      assertThat(StackProbe.restoredCheckpoint(stack.flinkUiUrl()))
          .as("a first start has no state")
          .isEmpty();
      assertThat(StackProbe.status(stack.flinkUiUrl() + "/jars"))
          .as("the Flink UI takes no jars")
          .isEqualTo(404);
      // Counts show within seconds (early firings), before the first checkpoint: stop after one
      // that holds them.
      StackProbe.awaitCheckpointAfterNow(stack.flinkUiUrl());
    }

    try (LocalStack stack = LocalStack.start(settings())) {
      String checkpoint = stack.resumedFrom().orElseThrow().getFileName().toString();
      assertThat(StackProbe.restoredCheckpoint(stack.flinkUiUrl()))
          .as("the job restored its retained checkpoint")
          .hasValueSatisfying(path -> assertThat(path).endsWith(checkpoint));
      assertThat(total(stack, code)).as("counts kept across the restart").isEqualTo(7);

      client(stack).follow(code, 3);
      awaitTotal(stack, code, 10);
      // A bot's click on the same link in every partition, after all the others (replays included):
      // once they are counted, every human click before them has been.
      int markers = StackProbe.botClickInEveryPartition(stack.kafkaBootstrap(), code);
      await()
          .atMost(Duration.ofSeconds(60))
          .pollInterval(Duration.ofSeconds(1))
          .until(() -> bots(stack, code) == markers);
      assertThat(total(stack, code)).as("nothing counted twice after the restart").isEqualTo(10);
    }
  }

  /**
   * Scrapes the running stack once the job has counted a duplicate, a malformed record and a late
   * click (so the series with those labels exist), and fails naming every selector of
   * docs/grafana/tally.json and docs/prometheus/tally-alerts.yml that selects nothing.
   */
  private static void theDashboardAndAlertsSelectOnlyPublishedSeries(LocalStack stack)
      throws Exception {
    LinkClient client = client(stack);
    String probe = client.createLink("https://example.com/metrics-probe");
    client.get("/api/links/" + probe + "/stats?from=1h");
    // A click is late only behind the job's watermark, which starts moving once the job has seen
    // clicks in its partitions: wait until it reports minutes final well past the late click's.
    long anHourAgo = System.currentTimeMillis() - Duration.ofHours(1).toMillis();
    await("the job's watermark well past an hour ago")
        .atMost(Duration.ofSeconds(90))
        .pollInterval(Duration.ofSeconds(1))
        .until(
            () ->
                StackProbe.closedBefore(stack.jdbcUrl())
                    > anHourAgo + Duration.ofMinutes(15).toMillis());
    StackProbe.duplicateMalformedAndLateClicks(stack.kafkaBootstrap(), probe, anHourAgo);
    String flinkMetrics =
        stack.flinkMetricsUrl().orElseThrow(() -> new AssertionError("no Flink metrics reporter"));
    String job = "tally_click_count";
    List<MonitoringFiles.Selector> moved =
        List.of(
            new MonitoringFiles.Selector(
                "flink_taskmanager_job_task_operator_duplicatesDropped",
                Map.of("job_name", job),
                "-"),
            new MonitoringFiles.Selector(
                "flink_taskmanager_job_task_operator_lateClicks", Map.of("job_name", job), "-"),
            new MonitoringFiles.Selector(
                "flink_taskmanager_job_task_operator_reason_deadLettered",
                Map.of("job_name", job, "reason", "not_json"),
                "-"));
    await("the duplicate, the malformed record and the late click counted by the job")
        .atMost(Duration.ofSeconds(90))
        .pollInterval(Duration.ofSeconds(1))
        .until(
            () -> {
              List<MonitoringFiles.Sample> flink =
                  MonitoringFiles.samples(StackProbe.text(flinkMetrics));
              return moved.stream()
                  .map(
                      selector ->
                          selector.metric()
                              + selector.labels()
                              + "="
                              + MonitoringFiles.sum(selector, flink))
                  .toList();
            },
            sums -> sums.stream().noneMatch(sum -> sum.endsWith("=0.0")));

    List<MonitoringFiles.Sample> published =
        MonitoringFiles.samples(
            StackProbe.text(flinkMetrics)
                + "\n"
                + StackProbe.text(stack.redirectUrl() + "/metrics"));
    List<MonitoringFiles.Selector> selectors = MonitoringFiles.allSelectors();
    assertThat(selectors).hasSizeGreaterThan(20);
    assertThat(selectors)
        .as("selectors of the dashboard and the alerts that select no published series")
        .filteredOn(selector -> !MonitoringFiles.matchesAny(selector, published))
        .isEmpty();
  }

  private StackSettings settings() {
    return new StackSettings(
        home,
        0,
        0,
        0,
        0,
        PortRange.ANY,
        Optional.empty(),
        "postgres",
        "",
        Optional.of("test-api-key"));
  }

  private static LinkClient client(LocalStack stack) {
    return new LinkClient(stack.redirectUrl(), stack.apiKey());
  }

  private void awaitTotal(LocalStack stack, String code, long expected) {
    // Open minutes show their partial totals within seconds; the bound leaves room for a slow
    // start.
    await()
        .atMost(Duration.ofSeconds(150))
        .pollInterval(Duration.ofSeconds(2))
        .until(() -> total(stack, code) == expected);
  }

  /** The human total as {@code ./tally counts CODE} prints it. */
  private static long total(LocalStack stack, String code) throws Exception {
    return Long.parseLong(totalLine(stack, code).group(1));
  }

  /** The bot total as {@code ./tally counts CODE} prints it. */
  private static long bots(LocalStack stack, String code) throws Exception {
    return Long.parseLong(totalLine(stack, code).group(2));
  }

  private static Matcher totalLine(LocalStack stack, String code) throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (Connection c = DriverManager.getConnection(stack.jdbcUrl(), "postgres", "")) {
      CountsReport.print(c, code, new PrintStream(out, true, StandardCharsets.UTF_8));
    }
    Matcher total = TOTAL.matcher(out.toString(StandardCharsets.UTF_8));
    assertThat(total.find()).isTrue();
    return total;
  }
}
