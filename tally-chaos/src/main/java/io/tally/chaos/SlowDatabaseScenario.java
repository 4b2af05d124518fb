package io.tally.chaos;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Scenario 7: a slow database under sustained load: PostgreSQL is paused 300 ms of every 500 ms for the
 * phase. Redirects and the producer must not block (the slowest redirect is reported), and the job must
 * catch up once the database is healthy (recovery: heal until every delivered click is counted).
 */
final class SlowDatabaseScenario extends OutageScenario {

  private final AtomicBoolean slow = new AtomicBoolean();
  private Thread dutyCycle;

  @Override
  public String name() {
    return "slow-db";
  }

  @Override
  public String title() {
    return "7. slow PostgreSQL (paused 300 of every 500 ms) under load: nothing blocks, the job catches up";
  }

  @Override
  Duration length(ChaosSettings settings) {
    return settings.slowPhase();
  }

  @Override
  void fault(ChaosStack stack) {
    PostgresPause pause = new PostgresPause(stack.services().postmasterPid());
    slow.set(true);
    dutyCycle = new Thread(() -> {
      try {
        while (slow.get()) {
          pause.pause();
          Thread.sleep(300);
          pause.resume();
          Thread.sleep(200);
        }
      } catch (Exception e) {
        slow.set(false);
      } finally {
        try {
          pause.resume();
        } catch (Exception e) {
          // heal() resumes again.
        }
      }
    }, "slow-postgres");
    dutyCycle.start();
  }

  @Override
  void heal(ChaosStack stack) throws Exception {
    slow.set(false);
    dutyCycle.join();
    new PostgresPause(stack.services().postmasterPid()).resume();
  }
}
