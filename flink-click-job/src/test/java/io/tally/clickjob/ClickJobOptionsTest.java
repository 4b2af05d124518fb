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

    assertThat(options.window()).isEqualTo(Duration.ofMinutes(1));
    assertThat(options.earlyFiringInterval()).isEqualTo(Duration.ofSeconds(2));
  }

  @Test
  void acceptsAWindowThatDividesAnHour() {
    assertThat(ClickJobOptions.parse("--window", "5m").window()).isEqualTo(Duration.ofMinutes(5));
  }

  @Test
  void refusesAWindowThatWouldStraddleHoursWithTheReason() {
    assertThatThrownBy(() -> ClickJobOptions.parse("--window", "7m"))
        .isInstanceOf(CommandLine.ParameterException.class)
        .hasMessageContaining("--window must divide an hour");
  }
}
