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
}
