package io.tally.launcher;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The walking skeleton on real parts, started the way {@code ./tally up} starts it: a link created
 * over HTTP, followed N times, shows N clicks in PostgreSQL with no further traffic; after a stop
 * and a start on the same data the counts are still there, the job restores the checkpoint that
 * holds the clicks (Flink says so: a start without state would count the same, since it rereads the
 * day), and new clicks are added without losing or doubling the old ones. On the way, a real
 * Prometheus scrapes the stack while clicks, a duplicate, malformed records and late clicks go
 * through: every query of the shipped dashboard answers data, every series the alert rules select
 * exists, and the dead-letter alert fires.
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
      theDashboardAndAlertsWorkOnARealPrometheus(stack);
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
   * A real Prometheus scrapes the running stack (redirect-web and Flink's reporter) with the
   * shipped alert rules loaded, while a duplicate, malformed records and late clicks go through.
   * Then every query of docs/grafana/tally.json and every series an alert rule selects must answer
   * data, and the dead-letter alert must fire. The rules are loaded without their {@code for}
   * durations, so that a condition that holds fires within the test; how long each rule waits is
   * what {@code promtool test rules} checks in CI.
   */
  private static void theDashboardAndAlertsWorkOnARealPrometheus(LocalStack stack)
      throws Exception {
    String flinkMetrics =
        stack.flinkMetricsUrl().orElseThrow(() -> new AssertionError("no Flink metrics reporter"));
    Path dir = Files.createDirectories(stack.settings().home().resolve("prometheus"));
    Path rules =
        Files.writeString(
            dir.resolve("tally-alerts-without-for.yml"),
            Files.readString(MonitoringFiles.ALERTS).replaceAll("(?m)^\\s+for: .*\\n", ""));
    Map<String, String> targets =
        Map.of(
            "redirect-web", URI.create(stack.redirectUrl()).getAuthority(),
            "flink", URI.create(flinkMetrics).getAuthority());
    try (PrometheusServer prometheus = PrometheusServer.start(dir, targets, rules)) {
      await("Prometheus scraping redirect-web and Flink")
          .atMost(Duration.ofSeconds(30))
          .pollInterval(Duration.ofMillis(500))
          .until(() -> prometheus.query("up == 1").size() == targets.size());

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
      // Twice: a counter whose series first appears with its first increment shows no rate until
      // it moves again while scraped.
      StackProbe.duplicateMalformedAndLateClicks(stack.kafkaBootstrap(), probe, anHourAgo);
      awaitCounted(flinkMetrics, 1);
      StackProbe.duplicateMalformedAndLateClicks(stack.kafkaBootstrap(), probe, anHourAgo);
      awaitCounted(flinkMetrics, 2);

      await("the dead-letter alert firing")
          .atMost(Duration.ofSeconds(60))
          .pollInterval(Duration.ofSeconds(1))
          .until(
              () ->
                  prometheus
                      .query("ALERTS{alertname=\"TallyDeadLetters\",alertstate=\"firing\"}")
                      .size(),
              firing -> firing > 0);

      List<String> panels = MonitoringFiles.dashboardQueries();
      assertThat(panels).hasSizeGreaterThan(20);
      List<String> emptyPanels = new ArrayList<>();
      for (String query : panels) {
        if (prometheus.query(query.replace("$__rate_interval", "1m")).isEmpty()) {
          emptyPanels.add(query);
        }
      }
      assertThat(emptyPanels)
          .as("dashboard queries that Prometheus answers with no data")
          .isEmpty();

      List<String> emptySelectors = new ArrayList<>();
      for (MonitoringFiles.Selector selector : MonitoringFiles.allSelectors()) {
        String series =
            selector.metric()
                + selector.labels().entrySet().stream()
                    .map(label -> label.getKey() + "=\"" + label.getValue() + "\"")
                    .collect(Collectors.joining(",", "{", "}"));
        if (prometheus.query(series).isEmpty()) {
          emptySelectors.add(selector.toString());
        }
      }
      assertThat(emptySelectors)
          .as("series selected by the dashboard or an alert rule that Prometheus does not have")
          .isEmpty();
    }
  }

  /** Waits until Flink's reporter shows the duplicate, malformed and late counts at {@code n}. */
  private static void awaitCounted(String flinkMetrics, int n) {
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
              return moved.stream().map(selector -> MonitoringFiles.sum(selector, flink)).toList();
            },
            sums -> sums.stream().allMatch(sum -> sum >= n));
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
        Optional.of("test-api-key-0123456789abcdefghijklm"));
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
