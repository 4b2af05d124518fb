package io.tally.launcher;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;

/**
 * The monitoring files Tally ships, read as Grafana and Prometheus read them: the dashboard's
 * PromQL queries, the alert rules, and the series selectors inside them, so tests can hold them
 * against what a running stack publishes.
 */
final class MonitoringFiles {

  static final Path DASHBOARD = Path.of("..", "docs", "grafana", "tally.json");
  static final Path ALERTS = Path.of("..", "docs", "prometheus", "tally-alerts.yml");
  static final Path RUNBOOK = Path.of("..", "docs", "operations.md");

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String NAME = "[a-zA-Z_:][a-zA-Z0-9_:]*";
  private static final Pattern SELECTOR_WITH_LABELS =
      Pattern.compile("(" + NAME + ")\\s*\\{([^}]*)}");
  private static final Pattern LABEL_MATCHER =
      Pattern.compile("(" + NAME + ")\\s*(=~|!~|!=|=)\\s*\"((?:[^\"\\\\]|\\\\.)*)\"");
  private static final Pattern LABEL_LIST =
      Pattern.compile("\\b(by|without|on|ignoring|group_left|group_right)\\s*\\([^)]*\\)");
  private static final Pattern IDENTIFIER =
      Pattern.compile("(?<![\\w:.$])(" + NAME + ")(?![\\w:])(\\s*\\()?");
  private static final Set<String> KEYWORDS =
      Set.of(
          "and",
          "or",
          "unless",
          "by",
          "without",
          "on",
          "ignoring",
          "group_left",
          "group_right",
          "bool",
          "offset",
          "inf",
          "nan",
          "Inf",
          "NaN");

  private MonitoringFiles() {}

  /**
   * One series selector of a query: the metric's name and the labels it must carry with exactly
   * these values ({@code =} matchers; regular-expression and negative matchers are not checked).
   */
  record Selector(String metric, Map<String, String> labels, String query) {
    @Override
    public String toString() {
      return metric + labels + "  in  " + query;
    }
  }

  /** An alert rule as the file states it. */
  record AlertRule(String name, String expr, Map<String, Object> annotations) {}

  /** Every PromQL query of the dashboard's panels, rows' panels included. */
  static List<String> dashboardQueries() throws IOException {
    List<String> queries = new ArrayList<>();
    collectQueries(JSON.readTree(DASHBOARD.toFile()).get("panels"), queries);
    return queries;
  }

  private static void collectQueries(JsonNode panels, List<String> queries) {
    if (panels == null) {
      return;
    }
    for (JsonNode panel : panels) {
      for (JsonNode target : panel.path("targets")) {
        if (target.hasNonNull("expr")) {
          queries.add(target.get("expr").asText());
        }
      }
      collectQueries(panel.get("panels"), queries);
    }
  }

  /** The dashboard as Grafana reads it. */
  static JsonNode dashboard() throws IOException {
    return JSON.readTree(DASHBOARD.toFile());
  }

  /** Every alert rule of every group. */
  @SuppressWarnings("unchecked")
  static List<AlertRule> alertRules() throws IOException {
    List<AlertRule> rules = new ArrayList<>();
    try (Reader in = Files.newBufferedReader(ALERTS)) {
      Map<String, Object> document = new Yaml(new LoaderOptions()).load(in);
      for (Map<String, Object> group : (List<Map<String, Object>>) document.get("groups")) {
        for (Map<String, Object> rule : (List<Map<String, Object>>) group.get("rules")) {
          rules.add(
              new AlertRule(
                  (String) rule.get("alert"),
                  (String) rule.get("expr"),
                  (Map<String, Object>) rule.getOrDefault("annotations", Map.of())));
        }
      }
    }
    return rules;
  }

  /** The selectors of every dashboard query and every alert rule. */
  static List<Selector> allSelectors() throws IOException {
    List<Selector> selectors = new ArrayList<>();
    for (String query : dashboardQueries()) {
      selectors.addAll(selectors(query));
    }
    for (AlertRule rule : alertRules()) {
      selectors.addAll(selectors(rule.expr()));
    }
    return selectors;
  }

  /**
   * The series selectors of one PromQL expression: {@code name{labels}} and bare metric names, but
   * not functions, aggregations, keywords, label names in {@code by (...)} and the like, strings or
   * numbers.
   */
  static List<Selector> selectors(String query) {
    List<Selector> found = new ArrayList<>();
    StringBuilder rest = new StringBuilder();
    Matcher withLabels = SELECTOR_WITH_LABELS.matcher(query);
    while (withLabels.find()) {
      Map<String, String> labels = new LinkedHashMap<>();
      Matcher matcher = LABEL_MATCHER.matcher(withLabels.group(2));
      while (matcher.find()) {
        if (matcher.group(2).equals("=")) {
          labels.put(matcher.group(1), matcher.group(3));
        }
      }
      found.add(new Selector(withLabels.group(1), labels, query));
      withLabels.appendReplacement(rest, " ");
    }
    withLabels.appendTail(rest);
    String bare =
        LABEL_LIST
            .matcher(rest)
            .replaceAll(" ")
            .replaceAll("\"(?:[^\"\\\\]|\\\\.)*\"", " ")
            .replaceAll("\\[[^]]*]", " ");
    Matcher identifier = IDENTIFIER.matcher(bare);
    while (identifier.find()) {
      boolean function = identifier.group(2) != null;
      String name = identifier.group(1);
      if (!function && !KEYWORDS.contains(name)) {
        found.add(new Selector(name, Map.of(), query));
      }
    }
    return found;
  }

  /** One sample of a Prometheus text scrape: the metric's name, its labels and its value. */
  record Sample(String metric, Map<String, String> labels, double value) {}

  private static final Pattern SAMPLE =
      Pattern.compile("^(" + NAME + ")(?:\\{(.*)})?\\s+(\\S+).*$");
  private static final Pattern SCRAPED_LABEL =
      Pattern.compile("(" + NAME + ")=\"((?:[^\"\\\\]|\\\\.)*)\"");

  static List<Sample> samples(String scrape) {
    List<Sample> samples = new ArrayList<>();
    for (String line : scrape.split("\n")) {
      Matcher sample = SAMPLE.matcher(line);
      if (line.startsWith("#") || !sample.matches()) {
        continue;
      }
      Map<String, String> labels = new LinkedHashMap<>();
      if (sample.group(2) != null) {
        Matcher label = SCRAPED_LABEL.matcher(sample.group(2));
        while (label.find()) {
          labels.put(label.group(1), label.group(2));
        }
      }
      samples.add(new Sample(sample.group(1), labels, Double.parseDouble(sample.group(3))));
    }
    return samples;
  }

  /** The sum of the values of every sample that {@code selector} selects, 0 when none does. */
  static double sum(Selector selector, List<Sample> samples) {
    return samples.stream().filter(s -> selects(selector, s)).mapToDouble(Sample::value).sum();
  }

  private static boolean selects(Selector selector, Sample sample) {
    return sample.metric().equals(selector.metric())
        && sample.labels().entrySet().containsAll(selector.labels().entrySet());
  }
}
