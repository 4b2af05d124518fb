package io.tally.bench.redirect;

import io.tally.testing.PrometheusText;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The click events an async redirect-web has sent, had acknowledged by Kafka and dropped, from its
 * metrics page.
 *
 * @param dropsByReason the drops by reason, as {@code reason=count, ...}; {@code none} when none
 */
record ClickCounters(double sent, double acknowledged, double dropped, String dropsByReason) {

  private static final String DROPPED = "tally_click_events_dropped_total";

  static ClickCounters scrape(int port) {
    Map<String, Double> metrics = PrometheusText.scrape(port);
    return new ClickCounters(
        PrometheusText.sum(metrics, "tally_click_events_sent_total"),
        PrometheusText.sum(metrics, "tally_click_events_acknowledged_total"),
        PrometheusText.sum(metrics, DROPPED),
        dropsByReason(metrics));
  }

  /**
   * The counters once every click sent is acknowledged or counted as dropped, or when {@code
   * patience} runs out: what the producer still buffered when the load stopped, delivered or given
   * up on.
   */
  static ClickCounters awaitSettled(int port, Duration patience) throws InterruptedException {
    long deadline = System.nanoTime() + patience.toNanos();
    ClickCounters counters = scrape(port);
    while (counters.unsettled() > 0 && System.nanoTime() < deadline) {
      Thread.sleep(200);
      counters = scrape(port);
    }
    return counters;
  }

  /** Clicks sent but neither acknowledged nor dropped (yet). */
  double unsettled() {
    return sent - acknowledged - dropped;
  }

  private static String dropsByReason(Map<String, Double> metrics) {
    String drops =
        metrics.entrySet().stream()
            .filter(e -> e.getKey().startsWith(DROPPED + "{") && e.getValue() > 0)
            .sorted(Map.Entry.comparingByKey())
            .map(e -> reason(e.getKey()) + String.format(Locale.ROOT, "=%.0f", e.getValue()))
            .collect(Collectors.joining(", "));
    return drops.isEmpty() ? "none" : drops;
  }

  private static String reason(String series) {
    int at = series.indexOf("reason=\"");
    return at < 0 ? series : series.substring(at + 8, series.indexOf('"', at + 8));
  }
}
