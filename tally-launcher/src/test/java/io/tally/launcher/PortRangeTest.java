package io.tally.launcher;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Tests for {@link PortRange} and how {@link StackSettings} reads {@code
 * TALLY_FLINK_METRICS_PORTS}.
 */
class PortRangeTest {

  @Test
  void readsARangeAPortAndAny() {
    assertThat(PortRange.parse("9250-9260", "V")).isEqualTo(new PortRange(9250, 9260));
    assertThat(PortRange.parse(" 29250 ", "V")).isEqualTo(new PortRange(29250, 29250));
    assertThat(PortRange.parse("0", "V")).isEqualTo(PortRange.ANY);
  }

  @Test
  void writesItselfAsFlinksReporterTakesIt() {
    assertThat(new PortRange(9250, 9260)).hasToString("9250-9260");
    assertThat(new PortRange(9250, 9250)).hasToString("9250");
  }

  @Test
  void refusesWhatIsNoRangeNamingTheVariable() {
    for (String bad : new String[] {"9260-9250", "abc", "9250-", "1-2-3", "70000", "-1"}) {
      assertThatThrownBy(() -> PortRange.parse(bad, "TALLY_FLINK_METRICS_PORTS"))
          .as(bad)
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage(
              "TALLY_FLINK_METRICS_PORTS must be a port or a range of ports such as 9250-9260, not"
                  + " '"
                  + bad
                  + "'");
    }
  }

  @Test
  void theStackTakesItsRangeFromTheEnvironmentWithADefault() {
    assertThat(StackSettings.fromEnv(Map.of()).flinkMetricsPorts())
        .isEqualTo(new PortRange(9250, 9260));
    assertThat(StackSettings.fromEnv(Map.of("TALLY_FLINK_METRICS_PORTS", " ")).flinkMetricsPorts())
        .isEqualTo(new PortRange(9250, 9260));
    assertThat(
            StackSettings.fromEnv(Map.of("TALLY_FLINK_METRICS_PORTS", "29250-29251"))
                .flinkMetricsPorts())
        .isEqualTo(new PortRange(29250, 29251));
  }
}
