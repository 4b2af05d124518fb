package io.tally.clickjob;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Arrays;
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

  @Test
  void helpNeverShowsAPasswordTakenFromTheEnvironment() {
    String help = new CommandLine(new ClickJobOptions()).getUsageMessage();

    // One block per option: its line and the description lines under it.
    assertThat(
            Arrays.stream(help.split("\n(?=\\s{2,6}-)"))
                .filter(block -> block.trim().startsWith("--") && block.contains("password")))
        .hasSize(3)
        .allSatisfy(block -> assertThat(block).doesNotContain("Default"));
  }

  @Test
  void kafkaSecurityFlagsBecomeTheClientsProperties() {
    ClickJobOptions options =
        ClickJobOptions.parse(
            "--kafka-security-protocol",
            "SASL_SSL",
            "--kafka-sasl-username",
            "click-job",
            "--kafka-sasl-password",
            "pw",
            "--kafka-truststore",
            "/etc/ca.p12");

    assertThat(options.connection().kafkaClientProperties())
        .containsEntry("bootstrap.servers", "localhost:9092")
        .containsEntry("security.protocol", "SASL_SSL")
        .containsEntry("sasl.mechanism", "SCRAM-SHA-512")
        .containsEntry("ssl.truststore.location", "/etc/ca.p12");
  }
}
