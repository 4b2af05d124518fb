package io.tally.chaos;

import io.tally.local.RunningClickJob;
import io.tally.local.flink.ClusterClickJob;
import io.tally.local.flink.StandaloneFlinkCluster;
import java.time.Duration;
import java.util.Locale;

/**
 * Scenario 16: the click job runs on a standalone Flink cluster ({@value
 * StandaloneFlinkCluster#TASK_MANAGERS} TaskManagers of 2 slots, the job on 2 subtasks), and the
 * TaskManager running its Kafka source is killed with SIGKILL under redirect load. One
 * TaskManager's slots hold the whole job, so Flink's restart strategy brings it back from its last
 * checkpoint on the slots left, with no spare TaskManager; the killed one is started again after
 * the outage and registers. Redirects answer 302 throughout and every delivered click is counted
 * once (the other claims are {@link OutageScenario}'s).
 */
final class TaskManagerKillScenario extends OutageScenario {

  private static final Duration MIN_OUTAGE = Duration.ofSeconds(30);

  private ClusterClickJob job;
  private String victim;
  private long killedAt;
  private boolean sawRestart;
  private Duration recovered;
  private int registeredAfterHeal;

  TaskManagerKillScenario() {
    super(
        "taskmanager-kill",
        "16. A Flink TaskManager killed under redirect load: the job recovers on the slots left,"
            + " counts exact");
  }

  @Override
  RunningClickJob startJob(ChaosStack stack) throws Exception {
    job = stack.startJobOnFlinkCluster();
    return job;
  }

  @Override
  void fault(ChaosStack stack) throws Exception {
    victim = job.taskManagerRunning("Click topic");
    killedAt = System.nanoTime();
    job.killTaskManager(victim);
  }

  @Override
  void whileDown(ChaosStack stack, RunningClickJob running, int webPort, Outcome outcome)
      throws Exception {
    boolean allRunning;
    try {
      allRunning = job.allTasksRunning();
    } catch (RuntimeException notAnswering) {
      // Says nothing of the job: look again next second.
      return;
    }
    if (!allRunning) {
      sawRestart = true;
    } else if (sawRestart && recovered == null) {
      recovered = Duration.ofNanos(System.nanoTime() - killedAt);
    }
  }

  /** Never shorter than {@link #MIN_OUTAGE}, so that the recovery on the slots left shows first. */
  @Override
  Duration length(ChaosSettings settings) {
    return settings.outage().compareTo(MIN_OUTAGE) < 0 ? MIN_OUTAGE : settings.outage();
  }

  @Override
  void heal(ChaosStack stack) {
    job.restartTaskManager(victim);
    registeredAfterHeal = job.registeredTaskManagers();
  }

  @Override
  void afterLoad(ChaosStack stack, Outcome outcome) {
    outcome.check(
        "the job ran again on the slots left before the TaskManager came back",
        recovered != null,
        recovered == null
            ? "not running on the slots left while " + victim + " was down"
            : String.format(
                Locale.ROOT,
                "%s killed; every task running again %.1f s after the kill",
                victim,
                recovered.toMillis() / 1e3));
    outcome.check(
        "the TaskManager back in the cluster",
        registeredAfterHeal == StandaloneFlinkCluster.TASK_MANAGERS,
        registeredAfterHeal + " TaskManagers registered after the restart");
  }
}
