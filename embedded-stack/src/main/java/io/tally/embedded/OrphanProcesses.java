package io.tally.embedded;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The processes a launcher killed with {@code kill -9} leaves running: they are no children of the
 * next launcher, yet hold the ports and data folders it needs. Each was recorded in a pid file when
 * started; the next start stops it, but only when its command line still names the folder it was
 * started for, so that a recycled pid is left alone.
 */
public final class OrphanProcesses {

  private static final Logger LOG = LoggerFactory.getLogger(OrphanProcesses.class);

  private OrphanProcesses() {}

  /**
   * Stops the process {@code pidFile} names if its command line contains {@code folder} (SIGTERM,
   * then SIGKILL after 30 s), and deletes the pid file.
   *
   * @param what how the log names the process
   * @throws IOException when the pid file cannot be read or deleted
   * @throws IllegalStateException when the process outlives SIGKILL
   */
  public static void stop(Path pidFile, String folder, String what)
      throws IOException, InterruptedException {
    if (!Files.exists(pidFile)) {
      return;
    }
    long pid = Long.parseLong(Files.readString(pidFile).trim());
    Optional<ProcessHandle> orphan =
        ProcessHandle.of(pid)
            .filter(p -> p.info().commandLine().map(c -> c.contains(folder)).orElse(false));
    if (orphan.isPresent()) {
      LOG.warn(
          "{} (pid {}) is still running from an earlier start that did not stop it; stopping it",
          what,
          pid);
      orphan.get().destroy();
      try {
        orphan.get().onExit().get(30, TimeUnit.SECONDS);
      } catch (TimeoutException e) {
        orphan.get().destroyForcibly();
        try {
          orphan.get().onExit().get(30, TimeUnit.SECONDS);
        } catch (TimeoutException | ExecutionException stuck) {
          throw new IllegalStateException(what + " (pid " + pid + ") does not stop", stuck);
        }
      } catch (ExecutionException e) {
        throw new IllegalStateException(e);
      }
    }
    Files.delete(pidFile);
  }
}
