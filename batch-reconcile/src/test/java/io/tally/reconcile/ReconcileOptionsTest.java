package io.tally.reconcile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * Tests for {@link ReconcileOptions}: what counts as closed, by the clock and by the stream, and
 * the removal limit.
 */
class ReconcileOptionsTest {

  private static final Instant NOW = Instant.parse("2026-11-30T12:00:00Z");

  @Test
  void withoutAStreamingJobPeriodsCloseByTheClock() {
    ReconcileOptions options = ReconcileOptions.parse("--from", "2h");

    assertThat(options.closedBefore(NOW, Optional.empty())).isEqualTo(NOW.minus(options.horizon()));
  }

  @Test
  void aStreamingJobThatIsBehindHoldsTheRepairBackToWhereItHasGot() {
    ReconcileOptions options = ReconcileOptions.parse("--from", "2h");
    Instant streamAt = NOW.minus(Duration.ofMinutes(40));

    assertThat(options.closedBefore(NOW, Optional.of(streamAt)))
        .isEqualTo(streamAt.minus(options.horizon()));
  }

  @Test
  void aStreamingJobThatIsUpToDateChangesNothing() {
    ReconcileOptions options = ReconcileOptions.parse("--from", "2h");

    assertThat(options.closedBefore(NOW, Optional.of(NOW))).isEqualTo(NOW.minus(options.horizon()));
  }

  @Test
  void readsAtLeastAsFarBackAsAClickMayBeAheadOfItsRecord() {
    // A click is counted by its own time, up to an hour after its record's timestamp.
    TimeRange range = new TimeRange(NOW.minus(Duration.ofHours(3)), NOW.minus(Duration.ofHours(2)));

    assertThat(ReconcileOptions.parse("--from", "3h").readFrom(range))
        .isEqualTo(range.from().minus(Duration.ofHours(1)));
    assertThat(ReconcileOptions.parse("--from", "3h", "--read-slack", "2h").readFrom(range))
        .isEqualTo(range.from().minus(Duration.ofHours(2)));
  }

  @Test
  void anExplicitHorizonIsTakenAsGiven() {
    ReconcileOptions options = ReconcileOptions.parse("--from", "2h", "--horizon", "0s");

    assertThat(options.closedBefore(NOW, Optional.of(NOW.minus(Duration.ofHours(1)))))
        .isEqualTo(NOW);
  }

  @Test
  void aRemovedShareOutsideZeroToOneIsRefused() {
    assertThatThrownBy(() -> ReconcileOptions.parse("--from", "2h", "--max-removed-share", "5"))
        .hasMessageContaining("--max-removed-share must be between 0 and 1");
  }

  @Test
  void theRemovedShareDefaultsToFivePercentWithoutForce() {
    ReconcileOptions options = ReconcileOptions.parse("--from", "2h");

    assertThat(options.maxRemovedShare()).isEqualTo(0.05);
    assertThat(options.force()).isFalse();
  }
}
