package io.tally.clickjob;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** Tests for {@link ClickJobOptions}. */
class ClickJobOptionsTest {

  @Test
  void defaultsToOneMinuteWindowsAndTwoSecondEarlyFirings() {
    ClickJobOptions options = ClickJobOptions.parse();

    assertThat(options.earlyFiringInterval()).isEqualTo(Duration.ofSeconds(2));
  }

  @Test
  void hasNoWindowToSetSinceEveryTableCountsByTheMinute() {
    assertThatThrownBy(() -> ClickJobOptions.parse("--window", "5m"))
        .isInstanceOf(CommandLine.UnmatchedArgumentException.class)
        .hasMessageContaining("--window");
  }

  @Test
  void refusesToKeepNoBreakdownValues() {
    assertThatThrownBy(() -> ClickJobOptions.parse("--max-dimension-values", "0"))
        .isInstanceOf(CommandLine.ParameterException.class)
        .hasMessageContaining("--max-dimension-values must be at least 1");
    assertThat(ClickJobOptions.parse().counting().maxDimensionValues()).isEqualTo(200);
  }
}
