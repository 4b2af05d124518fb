package io.tally.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** Tests for {@link PrometheusText}. */
class PrometheusTextTest {

  private static final String PAGE =
      """
      # HELP tally_click_events_dropped_total Clicks dropped
      # TYPE tally_click_events_dropped_total counter
      tally_click_events_dropped_total{reason="buffer_full"} 3.0
      tally_click_events_dropped_total{reason="too_large"} 1.0

      tally_click_events_sent_total 42.0
      tally_click_events_sent_total_other 5.0
      """;

  @Test
  void readsEverySeriesWithItsLabelsAndSkipsCommentsAndBlankLines() {
    assertThat(PrometheusText.parse(PAGE))
        .containsExactlyInAnyOrderEntriesOf(
            Map.of(
                "tally_click_events_dropped_total{reason=\"buffer_full\"}", 3.0,
                "tally_click_events_dropped_total{reason=\"too_large\"}", 1.0,
                "tally_click_events_sent_total", 42.0,
                "tally_click_events_sent_total_other", 5.0));
  }

  @Test
  void sumsEveryLabelOfOneNameAndNoOtherName() {
    Map<String, Double> metrics = PrometheusText.parse(PAGE);

    assertThat(PrometheusText.sum(metrics, "tally_click_events_dropped_total")).isEqualTo(4.0);
    assertThat(PrometheusText.sum(metrics, "tally_click_events_sent_total")).isEqualTo(42.0);
    assertThat(PrometheusText.sum(metrics, "missing")).isZero();
  }
}
