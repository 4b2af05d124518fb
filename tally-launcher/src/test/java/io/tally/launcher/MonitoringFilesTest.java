package io.tally.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.tally.launcher.MonitoringFiles.AlertRule;
import io.tally.launcher.MonitoringFiles.Selector;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * Tests for {@link MonitoringFiles} and the files it reads: the selector extraction that {@code
 * EndToEndITCase} holds against a running stack, the dashboard's shape, and each alert's summary
 * and runbook section. Whether the metrics exist is the ITCase's to check.
 */
class MonitoringFilesTest {

  @Test
  void findsEverySelectorOfAQueryButNoFunctionKeywordOrLabelName() {
    List<Selector> selectors =
        MonitoringFiles.selectors(
            "histogram_quantile(0.99, sum by (le, route)"
                + " (rate(http_seconds_bucket{job=\"web\",code!=\"500\"}[$__rate_interval]))) / on"
                + " (route) group_left sum without (instance) (up) > 0 and bool"
                + " label_replace(sum(rate(late_total{x=~\"a.*\"}[5m] offset 5m)), \"reason\","
                + " \"late\", \"\", \"\") or delta(sum(pending)[10m:1m]) > 1e3");

    assertThat(selectors)
        .extracting(Selector::metric, Selector::labels)
        .containsExactlyInAnyOrder(
            org.assertj.core.groups.Tuple.tuple("http_seconds_bucket", Map.of("job", "web")),
            org.assertj.core.groups.Tuple.tuple("late_total", Map.of()),
            org.assertj.core.groups.Tuple.tuple("up", Map.of()),
            org.assertj.core.groups.Tuple.tuple("pending", Map.of()));
  }

  @Test
  void readsAScrapesSamplesWithTheirLabels() {
    List<MonitoringFiles.Sample> samples =
        MonitoringFiles.samples(
            "# HELP a_total counts\n"
                + "# TYPE a_total counter\n"
                + "a_total{reason=\"x\",job=\"j\",} 3.0\n"
                + "b 1\n");

    assertThat(samples)
        .containsExactly(
            new MonitoringFiles.Sample("a_total", Map.of("reason", "x", "job", "j"), 3.0),
            new MonitoringFiles.Sample("b", Map.of(), 1));
    assertThat(MonitoringFiles.sum(new Selector("a_total", Map.of(), "q"), samples)).isEqualTo(3.0);
    assertThat(MonitoringFiles.sum(new Selector("a_total", Map.of("reason", "y"), "q"), samples))
        .isZero();
    assertThat(MonitoringFiles.sum(new Selector("a_totals", Map.of(), "q"), samples)).isZero();
  }

  @Test
  void theDashboardHasAStableUidAndTakesItsDatasourceAsAVariable() throws Exception {
    JsonNode dashboard = MonitoringFiles.dashboard();

    assertThat(dashboard.get("uid").asText()).isEqualTo("tally-overview");
    JsonNode variable = dashboard.at("/templating/list/0");
    assertThat(variable.get("name").asText()).isEqualTo("datasource");
    assertThat(variable.get("type").asText()).isEqualTo("datasource");
    assertThat(variable.get("query").asText()).isEqualTo("prometheus");
    List<String> datasources = new ArrayList<>();
    for (JsonNode panel : dashboard.get("panels")) {
      if (!panel.get("type").asText().equals("row")) {
        datasources.add(panel.at("/datasource/uid").asText());
        panel.get("targets").forEach(t -> datasources.add(t.at("/datasource/uid").asText()));
      }
    }
    assertThat(datasources).isNotEmpty().allMatch("${datasource}"::equals);
    assertThat(MonitoringFiles.dashboardQueries())
        .isNotEmpty()
        .allSatisfy(q -> assertThat(MonitoringFiles.selectors(q)).as(q).isNotEmpty());
  }

  @Test
  void everyAlertHasASummaryAndLeadsToItsOwnSectionOfTheRunbook() throws Exception {
    Set<String> anchors =
        Files.readAllLines(MonitoringFiles.RUNBOOK).stream()
            .filter(line -> line.startsWith("#"))
            .map(MonitoringFilesTest::githubAnchor)
            .collect(Collectors.toSet());
    List<AlertRule> rules = MonitoringFiles.alertRules();

    assertThat(rules)
        .extracting(AlertRule::name)
        .contains(
            "TallyKafkaLagGrowing",
            "TallyDeadLetters",
            "TallyClicksDroppedAtProducer",
            "TallyCheckpointsFailing",
            "TallyClickJobRestarting",
            "TallyClickJobNotRunning");
    for (AlertRule rule : rules) {
      assertThat((String) rule.annotations().get("summary")).as(rule.name()).isNotBlank();
      String anchor = rule.name().toLowerCase(Locale.ROOT);
      assertThat(rule.annotations().get("runbook_url"))
          .as(rule.name())
          .isEqualTo("docs/operations.md#" + anchor);
      assertThat(anchors).as("a heading '%s' in docs/operations.md", rule.name()).contains(anchor);
      assertThat(MonitoringFiles.selectors(rule.expr())).as(rule.name()).isNotEmpty();
    }
  }

  /**
   * The anchor GitHub gives a Markdown heading: lower case, punctuation dropped, spaces as hyphens.
   */
  private static String githubAnchor(String heading) {
    return heading
        .replaceFirst("^#+\\s*", "")
        .strip()
        .toLowerCase(Locale.ROOT)
        .replaceAll("[^\\p{L}\\p{N} _-]", "")
        .replace(' ', '-');
  }
}
