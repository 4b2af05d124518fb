package io.tally.bench.support;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** Tests for {@link Report}: the RATIO lines scripts read at the end of every run. */
class ReportTest {

  @Test
  void printsOneRatioLinePerFigureInTheOrderGiven() {
    Report report = new Report();
    report.ratio("pipeline/decoding_consumer", "throughput", 0.21234);
    report.ratio("pipeline.events_per_s", "value", 104_231.6);
    report.ratio("pipeline.hot.subtask_skew", "records_in", 2.0);

    assertThat(printed(report))
        .contains(
            "RATIO pipeline/decoding_consumer throughput 0.212\n"
                + "RATIO pipeline.events_per_s value 104232\n"
                + "RATIO pipeline.hot.subtask_skew records_in 2.000\n");
  }

  @Test
  void formatsLargeSmallAndMissingValuesSoEachStaysReadable() {
    assertThat(Report.format(0.412)).isEqualTo("0.412");
    assertThat(Report.format(999.9994)).isEqualTo("999.999");
    assertThat(Report.format(1000)).isEqualTo("1000");
    assertThat(Report.format(2_345_678.4)).isEqualTo("2345678");
    assertThat(Report.format(0.000_123_456)).isEqualTo("0.000123");
    assertThat(Report.format(0)).isEqualTo("0.000");
    assertThat(Report.format(-0.5)).isEqualTo("-0.500");
    assertThat(Report.format(Double.NaN)).isEqualTo("NaN");
  }

  @Test
  void refusesANameThatWouldSplitTheLine() {
    assertThatThrownBy(() -> new Report().ratio("stats p99", "365d/7d", 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("single words");
  }

  @Test
  void printsTargetsAsATableWithTheirResult() {
    Report report = new Report();
    report.target("pipeline: ≥ 100,000 events/s", "55119 events/s", false, "");
    report.target("counts exact", "exact", true, "");

    assertThat(printed(report))
        .contains("## Targets")
        .containsPattern("\\| pipeline: ≥ 100,000 events/s \\| 55119 events/s \\| MISSED \\|")
        .containsPattern("\\| counts exact +\\| +exact \\| +met \\|");
  }

  private static String printed(Report report) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    report.print(new PrintStream(bytes, true, StandardCharsets.UTF_8));
    return bytes.toString(StandardCharsets.UTF_8);
  }
}
