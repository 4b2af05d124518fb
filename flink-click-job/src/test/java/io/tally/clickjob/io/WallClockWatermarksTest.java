package io.tally.clickjob.io;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.eventtime.Watermark;
import org.apache.flink.api.common.eventtime.WatermarkOutput;
import org.apache.flink.util.clock.RelativeClock;
import org.junit.jupiter.api.Test;

/** Tests for {@link WallClockWatermarks}. */
class WallClockWatermarksTest {

  private long now = 1_000_000;

  /**
   * How long the source has not been able to read (backpressure): its input activity clock stood
   * still.
   */
  private long stalledFor;

  private final List<Long> emitted = new ArrayList<>();
  private int idleMarks;
  private final WatermarkOutput output =
      new WatermarkOutput() {
        @Override
        public void emitWatermark(Watermark watermark) {
          emitted.add(watermark.getTimestamp());
        }

        @Override
        public void markIdle() {
          idleMarks++;
        }

        @Override
        public void markActive() {}
      };
  private final WallClockWatermarks<String> generator =
      new WallClockWatermarks<>(
          Duration.ofSeconds(5),
          Duration.ofSeconds(20),
          () -> now,
          new RelativeClock() {
            @Override
            public long relativeTimeMillis() {
              return now - stalledFor;
            }

            @Override
            public long relativeTimeNanos() {
              return relativeTimeMillis() * 1_000_000;
            }
          });

  @Test
  void trailsTheNewestEventByTheOutOfOrderness() {
    generator.onEvent("a", 500_000, output);
    generator.onEvent("b", 490_000, output);
    generator.onPeriodicEmit(output);

    assertThat(emitted).containsExactly(500_000L - 5_000 - 1);
  }

  @Test
  void withoutAnyEventItNeverFollowsTheClockButMarksItselfIdle() {
    // Flink also runs a generator for the source reader's main output, which never sees an event
    // and whose watermarks skip the per-partition minimum: it must never move time forward on its
    // own.
    generator.onPeriodicEmit(output);
    assertThat(idleMarks).isZero();

    now += 20_000;
    generator.onPeriodicEmit(output);
    now += 3_600_000;
    generator.onPeriodicEmit(output);

    assertThat(emitted).isEmpty();
    assertThat(idleMarks).isPositive();
  }

  @Test
  void anIdlePartitionTrailsItsFirstEventLikeAnyOther() {
    now += 60_000;
    generator.onPeriodicEmit(output);
    generator.onEvent("a", now - 1_000, output);
    generator.onPeriodicEmit(output);

    assertThat(emitted).containsExactly(now - 1_000 - 5_001);
  }

  @Test
  void followsTheWallClockOnceThePartitionIsQuiet() {
    generator.onEvent("a", now, output);
    generator.onPeriodicEmit(output);
    now += 19_999;
    generator.onPeriodicEmit(output);
    assertThat(emitted).containsExactly(1_000_000L - 5_001);

    now += 1;
    generator.onPeriodicEmit(output);
    assertThat(emitted).last().isEqualTo(now - 25_000);

    now += 60_000;
    generator.onPeriodicEmit(output);
    assertThat(emitted)
        .last()
        .as("keeps following the clock so the last minute closes")
        .isEqualTo(now - 25_000);
  }

  @Test
  void aPartitionReplayingOldClicksDoesNotFollowTheClockWhenItPauses() {
    // A backlog an hour old, then no records for a while: backpressure, not a quiet stream.
    generator.onEvent("old", now - 3_600_000, output);
    now += 30_000;
    generator.onPeriodicEmit(output);

    assertThat(emitted).containsExactly(1_000_000L - 3_600_000 - 5_001);

    now += 10 * 20_000;
    generator.onPeriodicEmit(output);
    assertThat(emitted)
        .as("quiet for ten idle timeouts: a partition that really stopped")
        .last()
        .isEqualTo(now - 25_000);
  }

  @Test
  void aLivePartitionStalledByBackpressureDoesNotFollowTheClockHoweverLong() {
    // Live clicks, then the job stalls (PostgreSQL down, sinks blocked): the source stops reading
    // while the clicks made meanwhile wait in Kafka. Ten minutes is twice the allowed lateness.
    generator.onEvent("live", now - 1_000, output);
    generator.onPeriodicEmit(output);
    stall(600_000);
    generator.onPeriodicEmit(output);
    assertThat(emitted).containsExactly(1_000_000L - 1_000 - 5_001);

    // Reading resumes with the first click that waited: it is on time.
    generator.onEvent("waited", 1_000_500, output);
    generator.onPeriodicEmit(output);
    assertThat(emitted).last().isEqualTo(1_000_500L - 5_001);

    // Caught up with the clicks that waited, then really quiet: follows the clock after the idle
    // timeout.
    generator.onEvent("live again", now - 1_000, output);
    now += 20_000;
    generator.onPeriodicEmit(output);
    assertThat(emitted).last().isEqualTo(now - 25_000);
  }

  @Test
  void aPartitionThatCaughtUpFollowsTheClockAfterTheIdleTimeout() {
    generator.onEvent("old", now - 3_600_000, output);
    now += 1_000;
    generator.onEvent("live", now - 2_000, output);
    now += 20_000;
    generator.onPeriodicEmit(output);

    assertThat(emitted).last().isEqualTo(now - 25_000);
  }

  @Test
  void aRecordStampedInTheFutureMovesTheWatermarkNoFurtherThanNow() {
    generator.onEvent("skewed", now + 3_600_000, output);
    generator.onPeriodicEmit(output);
    generator.onEvent("live", now - 1_000, output);
    generator.onPeriodicEmit(output);

    assertThat(emitted).containsExactly(now - 5_001);
  }

  @Test
  void neverMovesBackwards() {
    generator.onEvent("a", 900_000, output);
    now += 30_000;
    generator.onPeriodicEmit(output);
    long high = emitted.get(emitted.size() - 1);
    generator.onEvent("late", 100_000, output);
    generator.onPeriodicEmit(output);

    assertThat(emitted).allSatisfy(w -> assertThat(w).isLessThanOrEqualTo(high));
    assertThat(emitted).isSorted();
  }

  private void stall(long millis) {
    now += millis;
    stalledFor += millis;
  }
}
