package io.tally.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.event.MalformedReason;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The chaos scenarios that fit in minutes, at {@link ChaosSettings#small()} volumes, each on its
 * own stack (durable PostgreSQL, Kafka broker, the click job in a child JVM): each must keep every
 * claim it checks.
 */
class ChaosScenariosITCase {

  private static final ChaosSettings SMALL = ChaosSettings.small();

  @TempDir Path dir;

  @Test
  void poisonOnTheTopicAndThroughHttpIsDeadLetteredOrCountedWhileAnotherLinkStaysLive() {
    Outcome outcome = ChaosCommand.run(new PoisonScenario(), dir, SMALL);

    assertThat(outcome.checks())
        .allSatisfy(c -> assertThat(c.passed()).as(c.claim() + ": " + c.detail()).isTrue());
    assertThat(PoisonRecords.all(0, 0)).hasSizeGreaterThanOrEqualTo(20);
    assertThat(outcome.deadLetters().keySet())
        .containsAll(Arrays.stream(MalformedReason.values()).map(MalformedReason::label).toList());
    assertThat(outcome.restarts()).isZero();
    assertThat(Drift.total(outcome.drift())).isZero();
  }

  @Test
  void clicksLaterThanTheLatenessAreDeadLetteredThenRecoveredByReconcile() {
    Outcome outcome = ChaosCommand.run(new LateClicksScenario(), dir, SMALL);

    assertThat(outcome.checks())
        .allSatisfy(c -> assertThat(c.passed()).as(c.claim() + ": " + c.detail()).isTrue());
    assertThat(outcome.deadLetters().get("late"))
        .isGreaterThanOrEqualTo(LateClicksScenario.LATE_CLICKS);
    assertThat(Drift.total(outcome.drift())).isZero();
  }

  @Test
  void producerRetriesARewindToAnOlderCheckpointAndAStatelessOffsetRewindLeaveNoDrift() {
    Outcome outcome = ChaosCommand.run(new ReplaysScenario(), dir, SMALL);

    assertThat(outcome.checks())
        .allSatisfy(c -> assertThat(c.passed()).as(c.claim() + ": " + c.detail()).isTrue());
    assertThat(Drift.total(outcome.drift())).isZero();
  }

  @Test
  void threeHardKillsOfTheJobLeaveNoDrift() {
    Outcome outcome = ChaosCommand.run(new JobKillsScenario(), dir, SMALL);

    assertThat(outcome.checks())
        .allSatisfy(c -> assertThat(c.passed()).as(c.claim() + ": " + c.detail()).isTrue());
    assertThat(outcome.restarts()).isGreaterThanOrEqualTo(3);
    assertThat(Drift.total(outcome.drift())).isZero();
  }

  @Test
  void oneFloodingClientIsRefusedAndTheVisitorsKeepTheirRedirects() {
    Outcome outcome = ChaosCommand.run(new AbuseScenario(), dir, SMALL);

    assertThat(outcome.checks())
        .hasSizeGreaterThanOrEqualTo(8)
        .allSatisfy(c -> assertThat(c.passed()).as(c.claim() + ": " + c.detail()).isTrue());
    assertThat(Drift.total(outcome.drift())).isZero();
  }

  @Test
  void aBrokerKilledUnderLoadCostsNoAcknowledgedClick() {
    Outcome outcome = ChaosCommand.run(new BrokerKillScenario(), dir, SMALL);

    assertThat(outcome.checks())
        .allSatisfy(c -> assertThat(c.passed()).as(c.claim() + ": " + c.detail()).isTrue());
    assertThat(Drift.total(outcome.drift())).isZero();
  }

  @Test
  void aDatabaseFailoverEndsWithExactCountsAndNoRestartLoop() {
    Outcome outcome = ChaosCommand.run(new DatabaseFailoverScenario(), dir, SMALL);

    assertThat(outcome.checks())
        .allSatisfy(c -> assertThat(c.passed()).as(c.claim() + ": " + c.detail()).isTrue());
    assertThat(Drift.total(outcome.drift())).isZero();
  }
}
