package io.tally.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Which redirect-web a start takes for an earlier one's: the one in its home's pid file whose
 * command line names its log file (when it refuses: {@code OrphanProcessesTest}). A shell that
 * sleeps, with that option, stands in for it.
 */
class RedirectWebProcessTest {

  @TempDir Path home;
  private Process earlier;

  @AfterEach
  void tearDown() throws Exception {
    if (earlier != null) {
      earlier.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }
  }

  @Test
  void stopsOneWhoseLauncherHasGone() throws Exception {
    earlier = startLookalike(home.resolve("logs"));
    writePidFile(earlier.pid(), ProcessHandle.current().pid() + 1_000_000);

    RedirectWebProcess.stopOrphan(home, home.resolve("logs"));

    assertThat(earlier.waitFor(10, TimeUnit.SECONDS)).as("stopped").isTrue();
    assertThat(home.resolve("redirect-web.pid")).doesNotExist();
  }

  @Test
  void leavesOneThatLogsElsewhere() throws Exception {
    earlier = startLookalike(home.resolve("other-logs"));
    writePidFile(earlier.pid(), ProcessHandle.current().pid() + 1_000_000);

    RedirectWebProcess.stopOrphan(home, home.resolve("logs"));

    assertThat(earlier.isAlive()).as("another home's redirect-web").isTrue();
  }

  private static Process startLookalike(Path logs) throws Exception {
    String logFile = "-Dlog.file=" + logs.resolve("redirect-web.log");
    Process process =
        new ProcessBuilder("sh", "-c", "sleep 30; true", RedirectWebProcess.MARKER, logFile)
            .start();
    // Until the shell has exec'd, its command line reads as the spawn helper's, then as none.
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!process.info().commandLine().map(c -> c.contains(logFile)).orElse(false)) {
      assertThat(System.nanoTime()).as("command line of pid " + process.pid()).isLessThan(deadline);
      Thread.sleep(10);
    }
    return process;
  }

  private void writePidFile(long child, long launcher) throws Exception {
    Files.writeString(home.resolve("redirect-web.pid"), child + " " + launcher);
  }
}
