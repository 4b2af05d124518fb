package io.tally.chaos;

import java.time.Duration;

/**
 * The volumes and timings of a run: {@link #full()} as the issue states them, {@link #small()} for
 * the ITCases and a quick look (same faults, fewer events).
 *
 * @param jobKillEvents events of scenario 1 (duplicates included)
 * @param replayEvents events of scenario 4
 * @param validEvents valid clicks around the poison and late records of scenarios 5 and 6
 * @param kills hard kills of scenario 1
 * @param outage how long the broker is down in scenario 2
 * @param postgresOutage how long PostgreSQL is paused in scenario 3: in the full run long enough
 *     (twice the job's allowed lateness) for the clicks waiting in Kafka to be late if the
 *     watermark moved on
 * @param slowPhase how long PostgreSQL is slowed in scenario 7
 * @param redirectRate redirects per second of scenarios 2, 3 and 7
 * @param checkpointInterval the click job's checkpoint interval
 * @param settle longest wait for the counts to equal the truth after a scenario's fault
 * @param keep keep each stack's folder afterwards
 */
public record ChaosSettings(
    long jobKillEvents,
    long replayEvents,
    long validEvents,
    int kills,
    Duration outage,
    Duration postgresOutage,
    Duration slowPhase,
    int redirectRate,
    Duration checkpointInterval,
    Duration settle,
    boolean keep) {

  public static ChaosSettings full() {
    return new ChaosSettings(
        1_000_000,
        200_000,
        50_000,
        3,
        Duration.ofSeconds(60),
        Duration.ofMinutes(10),
        Duration.ofSeconds(60),
        300,
        Duration.ofSeconds(5),
        Duration.ofMinutes(4),
        false);
  }

  public static ChaosSettings small() {
    return new ChaosSettings(
        30_000,
        20_000,
        5_000,
        3,
        Duration.ofSeconds(15),
        Duration.ofSeconds(15),
        Duration.ofSeconds(15),
        100,
        Duration.ofSeconds(2),
        Duration.ofMinutes(2),
        false);
  }

  /** The same with PostgreSQL paused for {@code pause} in postgres-down, folders kept or not. */
  public ChaosSettings with(Duration pause, boolean keepFolders) {
    return new ChaosSettings(
        jobKillEvents,
        replayEvents,
        validEvents,
        kills,
        outage,
        pause,
        slowPhase,
        redirectRate,
        checkpointInterval,
        settle,
        keepFolders);
  }
}
