package io.tally.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a start does with a process an earlier one recorded for its folder: one whose launcher still
 * runs belongs to a running start and is left alone; one whose launcher has gone is stopped; one
 * that does not name the folder took a recycled pid and is left alone. A shell that sleeps, with
 * the folder in its command line, stands in for the process.
 */
class OrphanProcessesTest {

  @TempDir Path folder;
  private Process earlier;

  @AfterEach
  void tearDown() throws Exception {
    if (earlier != null) {
      earlier.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }
  }

  @Test
  void refusesWhileTheLauncherThatStartedItStillRuns() throws Exception {
    earlier = startNaming(folder.toString());
    // Recorded by this JVM, as a running launcher records its children.
    OrphanProcesses.record(pidFile(), earlier);

    assertThatThrownBy(() -> OrphanProcesses.stop(pidFile(), folder.toString(), "node"))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("still running (pid " + ProcessHandle.current().pid());
    assertThat(earlier.isAlive()).as("a running start's process is left alone").isTrue();
    assertThat(pidFile()).exists();
  }

  @Test
  void stopsOneWhoseLauncherHasGone() throws Exception {
    earlier = startNaming(folder.toString());
    Files.writeString(pidFile(), earlier.pid() + " " + goneLauncher());

    OrphanProcesses.stop(pidFile(), folder.toString(), "node");

    assertThat(earlier.waitFor(10, TimeUnit.SECONDS)).as("stopped").isTrue();
    assertThat(pidFile()).doesNotExist();
  }

  @Test
  void stopsOneRecordedWithoutItsLauncher() throws Exception {
    earlier = startNaming(folder.toString());
    // As pid files were written before they named the launcher.
    Files.writeString(pidFile(), String.valueOf(earlier.pid()));

    OrphanProcesses.stop(pidFile(), folder.toString(), "node");

    assertThat(earlier.waitFor(10, TimeUnit.SECONDS)).as("stopped").isTrue();
  }

  @Test
  void forgetsThePidFileOfAProcessThatDoesNotNameTheFolder() throws Exception {
    earlier = startNaming("elsewhere");
    Files.writeString(pidFile(), earlier.pid() + " " + goneLauncher());

    OrphanProcesses.stop(pidFile(), folder.toString(), "node");

    assertThat(earlier.isAlive()).as("another process that took the pid").isTrue();
    assertThat(pidFile()).doesNotExist();
  }

  private static Process startNaming(String folder) throws Exception {
    return new ProcessBuilder("sh", "-c", "sleep 30", folder).start();
  }

  private static long goneLauncher() {
    return ProcessHandle.current().pid() + 1_000_000;
  }

  private Path pidFile() {
    return folder.resolve("node.pid");
  }
}
