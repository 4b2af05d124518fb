package io.tally.embedded;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The processes a launcher killed with {@code kill -9} leaves running: they are no children of the
 * next launcher, yet hold the ports and data folders it needs. Each is recorded in a pid file when
 * started, with the pid of the launcher that started it; the next start stops it, but only when its
 * command line still names the folder it was started for, so that a recycled pid is left alone, and
 * refuses when it is still the child of that launcher and that is another JVM, since it is running
 * on the same folder.
 */
public final class OrphanProcesses {

  private static final Logger LOG = LoggerFactory.getLogger(OrphanProcesses.class);

  private static final Duration STOP_PATIENCE = Duration.ofSeconds(30);

  private OrphanProcesses() {}

  /** Records {@code process}, started by this JVM, in {@code pidFile} for {@link #stop}. */
  public static void record(Path pidFile, Process process) throws IOException {
    Files.writeString(pidFile, process.pid() + " " + ProcessHandle.current().pid());
  }

  /**
   * Stops the process {@code pidFile} names if its command line contains {@code folder} (SIGTERM,
   * then SIGKILL if it outlives {@link #STOP_PATIENCE}), and deletes the pid file.
   *
   * @param what how the log names the process
   * @throws IOException when the pid file cannot be read or deleted
   * @throws IllegalStateException when the process is still the child of another JVM that started
   *     it (a running start on the same folder), or outlives SIGKILL
   */
  public static void stop(Path pidFile, String folder, String what)
      throws IOException, InterruptedException {
    if (!Files.exists(pidFile)) {
      return;
    }
    String[] pids = Files.readString(pidFile).trim().split("\\s+");
    long pid;
    long launcher;
    try {
      pid = Long.parseLong(pids[0]);
      launcher = pids.length > 1 ? Long.parseLong(pids[1]) : 0;
    } catch (NumberFormatException unreadable) {
      // A launcher killed between creating the file and writing it leaves it empty.
      LOG.warn("{} names no process; forgetting it", pidFile);
      Files.delete(pidFile);
      return;
    }
    Optional<ProcessHandle> orphan =
        ProcessHandle.of(pid)
            .filter(p -> p.info().commandLine().map(c -> c.contains(folder)).orElse(false));
    if (orphan.isPresent()) {
      if (isChildOfAnotherRunningLauncher(orphan.get(), launcher)) {
        throw new IllegalStateException(
            what
                + " (pid "
                + pid
                + ") belongs to a start that is still running (pid "
                + launcher
                + ") on "
                + folder
                + "; stop that first");
      }
      LOG.warn(
          "{} (pid {}) is still running from an earlier start that did not stop it; stopping it",
          what,
          pid);
      orphan.get().destroy();
      if (!GracefulStop.awaitOrKill(orphan.get(), what, STOP_PATIENCE)) {
        throw new IllegalStateException(what + " (pid " + pid + ") does not stop");
      }
    }
    Files.delete(pidFile);
  }

  /**
   * Whether {@code process}'s launcher, recorded as {@code launcher} (0 when the file predates
   * that), still runs and is another JVM: one this JVM started and failed to stop is its to stop.
   */
  private static boolean isChildOfAnotherRunningLauncher(ProcessHandle process, long launcher) {
    return launcher > 0
        && launcher != ProcessHandle.current().pid()
        && process.parent().map(ProcessHandle::pid).orElse(0L) == launcher;
  }
}
