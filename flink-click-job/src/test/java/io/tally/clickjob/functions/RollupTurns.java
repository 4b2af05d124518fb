package io.tally.clickjob.functions;

import java.time.Duration;
import org.apache.flink.streaming.util.AbstractStreamOperatorTestHarness;

/** The counting operator's turns of roll-ups, as its harness tests drive them. */
final class RollupTurns {

  private RollupTurns() {}

  /** The ticks of an interval: each link's hours, days and backlog minutes are written on one. */
  static int perInterval(Duration earlyFiring) {
    return (int) Math.max(1, LiveOrBacklog.ALL_CHANGES_MILLIS / earlyFiring.toMillis());
  }

  /** The tick of an interval, counted from the operator's first, that writes {@code code}'s. */
  static int of(String code, Duration earlyFiring) {
    return CountClicksPerLink.rollupTurn(code, perInterval(earlyFiring));
  }

  /** Ticks the operator through a whole interval from now: every link's turn comes once. */
  static void throughEveryTurn(AbstractStreamOperatorTestHarness<?> harness, Duration earlyFiring)
      throws Exception {
    long now = harness.getProcessingTime();
    for (long tick = 1; tick <= perInterval(earlyFiring); tick++) {
      harness.setProcessingTime(now + tick * earlyFiring.toMillis());
    }
  }
}
