package io.tally.redirect.stats;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

/** Tests for {@link StatsAdmission}. */
class StatsAdmissionTest {

  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final StatsAdmission admission = new StatsAdmission(2, 1, registry);

  @Test
  void aKeyRunsTwoRequestsAtOnceAndTheThirdIsRefusedUntilOneEnds() {
    StatsAdmission.Slot first = admission.admit("a");
    StatsAdmission.Slot second = admission.admit("a");

    assertThatThrownBy(() -> admission.admit("a"))
        .isInstanceOf(StatsAdmission.Busy.class)
        .hasMessageContaining("already has 2 stats requests running");
    admission.admit("b").close();

    first.close();
    admission.admit("a").close();
    second.close();
    assertThat(
            registry.get("tally.rate.limited").tag("limit", "stats-concurrency").counter().count())
        .isEqualTo(1);
  }

  @Test
  void oneHeavyQueryRunsAtOnceWhoeverAsks() {
    try (StatsAdmission.Slot heavy = admission.admitHeavy()) {
      assertThatThrownBy(admission::admitHeavy)
          .isInstanceOf(StatsAdmission.Busy.class)
          .hasMessageContaining("heaviest stats queries");
    }
    admission.admitHeavy().close();
    assertThat(registry.get("tally.rate.limited").tag("limit", "heavy-stats").counter().count())
        .isEqualTo(1);
  }
}
