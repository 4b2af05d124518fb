package io.tally.redirect.stats;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Tests for {@link StatsAdmission}. */
class StatsAdmissionTest {

  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final StatsAdmission admission = new StatsAdmission(2, 1, registry);

  @Test
  void aKeysThirdRequestWaitsForOneOfItsTwoRunningAndIsRefusedWhenNoneEndsInTime() {
    StatsAdmission.Slot first = admission.admit("a");
    StatsAdmission.Slot second = admission.admit("a");
    admission.admit("b").close();

    long start = System.nanoTime();
    assertThatThrownBy(() -> admission.admit("a"))
        .isInstanceOf(StatsAdmission.Busy.class)
        .hasMessageContaining("already has 2 stats requests running");
    assertThat(System.nanoTime() - start)
        .isGreaterThanOrEqualTo(StatsAdmission.QUEUE_WAIT.toNanos() - 50_000_000L);
    assertThat(
            registry.get("tally.rate.limited").tag("limit", "stats-concurrency").counter().count())
        .isEqualTo(1);

    first.close();
    admission.admit("a").close();
    second.close();
  }

  @Test
  void aWaitingRequestRunsOnceOneOfTheKeysRequestsEnds() throws Exception {
    StatsAdmission.Slot first = admission.admit("a");
    StatsAdmission.Slot second = admission.admit("a");
    CompletableFuture<StatsAdmission.Slot> third =
        CompletableFuture.supplyAsync(() -> admission.admit("a"));
    Thread.sleep(100);
    assertThat(third).isNotDone();

    first.close();

    third.get(1, TimeUnit.SECONDS).close();
    second.close();
  }

  @Test
  void closingASlotTwiceFreesOnePlaceOnly() {
    StatsAdmission.Slot first = admission.admit("a");
    first.close();
    first.close();
    admission.admit("a");
    admission.admit("a");

    assertThatThrownBy(() -> admission.admit("a")).isInstanceOf(StatsAdmission.Busy.class);
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
