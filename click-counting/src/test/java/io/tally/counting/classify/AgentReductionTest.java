package io.tally.counting.classify;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Tests for {@link AgentReduction}. */
class AgentReductionTest {

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "Chrome/131.0.6778.86 Safari/537.36|Chrome/131.0.1.1 Safari/537.1",
        "Chrome/131.0.0.0 Safari/537.36|Chrome/131.0.0.0 Safari/537.1",
        "CPU iPhone OS 17_5_1 like Mac OS X|CPU iPhone OS 17_1_1 like Mac OS X",
        "Gecko/20100101 Firefox/133.0|Gecko/1 Firefox/133.0",
        "Build/TP1A.220624.014; wv|Build/TP1A.1.1; wv",
        "Android 13; SM-X710|Android 13; SM-X710",
        "Nexus 7 Build/JSS15Q|Nexus 7 Build/JSS15Q",
        "Mobile/15E148 Safari/604.1|Mobile/15E148 Safari/604.1",
        "app/2.1 (9f3ab27c41d0)|app/2.1 (x)",
        "app token a1b2c3d4e5|app token x",
        "session/Ab3Cd9Ef2Gh7Jk4Lm|session/x",
        "Win64; x64; iPhone13,2|Win64; x64; iPhone13,2",
        "Linux x86_64; rv:133.0|Linux x86_64; rv:133.0",
        "Streamline3Bot/1.0; Site24x7|Streamline3Bot/1.0; Site24x7",
      })
  void replacesWhatAClientVariesForFreeAndKeepsWhatTheAnswerDependsOn(
      String agent, String reduced) {
    assertThat(AgentReduction.reduce(agent)).isEqualTo(reduced);
  }

  @Test
  void agentsDifferingOnlyInBuildNumbersReduceAlike() {
    String template =
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko)"
            + " Chrome/131.0.%d.%d Safari/537.36";
    String first = AgentReduction.reduce(String.format(template, 6778, 86));
    for (int build = 1; build < 1000; build += 7) {
      assertThat(AgentReduction.reduce(String.format(template, build, build * 31)))
          .isEqualTo(first);
    }
  }

  @Test
  void anAgentWithNothingToReduceIsReturnedAsItIs() {
    String agent = "Mozilla/5.0 (X11; Linux x86_64; rv:133.0)";
    assertThat(AgentReduction.reduce(agent)).isSameAs(agent);
  }
}
