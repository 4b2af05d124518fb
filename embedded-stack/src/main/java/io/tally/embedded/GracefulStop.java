package io.tally.embedded;

import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The end of a graceful stop, as a service manager ends one: a process that was asked to stop
 * (SIGTERM, sent by the caller, to one process or to several at once) is given time to finish, then
 * killed.
 */
public final class GracefulStop {

  private static final Logger LOG = LoggerFactory.getLogger(GracefulStop.class);

  /** How long a killed process is waited for: the kernel's part only. */
  private static final Duration KILL_PATIENCE = Duration.ofSeconds(30);

  private GracefulStop() {}

  /**
   * Waits up to {@code patience} for {@code process}, already asked to stop, to exit; kills it if
   * it has not.
   *
   * @param what the process as a log line names it
   * @return whether it has exited
   */
  public static boolean awaitOrKill(ProcessHandle process, String what, Duration patience)
      throws InterruptedException {
    if (awaitExit(process, patience)) {
      return true;
    }
    LOG.warn(
        "{} (pid {}) did not stop within {} s; killing it",
        what,
        process.pid(),
        patience.toSeconds());
    process.destroyForcibly();
    return awaitExit(process, KILL_PATIENCE);
  }

  private static boolean awaitExit(ProcessHandle process, Duration patience)
      throws InterruptedException {
    try {
      process.onExit().get(patience.toMillis(), TimeUnit.MILLISECONDS);
      return true;
    } catch (TimeoutException e) {
      return false;
    } catch (ExecutionException e) {
      throw new IllegalStateException("waiting for pid " + process.pid(), e);
    }
  }
}
