package io.tally.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a start does with a process an earlier one recorded for its folder: one whose launcher is
 * another running JVM belongs to a running start and is left alone; one whose launcher has gone, or
 * is this JVM, is stopped; one that does not name the folder took a recycled pid and is left alone.
 * A shell that sleeps, with the folder in its command line, stands in for the process, and another
 * shell for another launcher.
 */
class OrphanProcessesTest {

  @TempDir Path folder;
  private final List<ProcessHandle> started = new ArrayList<>();

  @AfterEach
  void tearDown() throws Exception {
    for (ProcessHandle process : started) {
      process.destroyForcibly();
      process.onExit().get(10, TimeUnit.SECONDS);
    }
  }

  @Test
  void refusesWhileAnotherLauncherThatStartedItStillRuns() throws Exception {
    // Another launcher: a shell that starts the process, with the folder as its $0, and waits.
    Process launcher =
        new ProcessBuilder(
                "sh",
                "-c",
                "sh -c 'sleep 30; true' \"$1\" & echo $!; wait",
                "sh",
                folder.toString())
            .start();
    started.add(launcher.toHandle());
    ProcessHandle earlier = ProcessHandle.of(firstLineAsPid(launcher)).orElseThrow();
    started.add(earlier);
    // Until the child has exec'd its own command, its command line reads as the launcher's, then
    // for
    // a moment as none: a start that looked then would find no process to refuse for.
    awaitCommandLineNaming(earlier, "sleep 30; true " + folder);
    Files.writeString(pidFile(), earlier.pid() + " " + launcher.pid());

    assertThatThrownBy(() -> OrphanProcesses.stop(pidFile(), folder.toString(), "node"))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("still running (pid " + launcher.pid());
    assertThat(earlier.isAlive()).as("a running start's process is left alone").isTrue();
    assertThat(pidFile()).exists();
  }

  @Test
  void stopsOneWhoseLauncherHasGone() throws Exception {
    Process earlier = startNaming(folder.toString());
    Files.writeString(pidFile(), earlier.pid() + " " + goneLauncher());

    OrphanProcesses.stop(pidFile(), folder.toString(), "node");

    assertThat(earlier.waitFor(10, TimeUnit.SECONDS)).as("stopped").isTrue();
    assertThat(pidFile()).doesNotExist();
  }

  @Test
  void stopsOneThisJvmStartedAndDidNotStop() throws Exception {
    Process earlier = startNaming(folder.toString());
    OrphanProcesses.record(pidFile(), earlier);

    OrphanProcesses.stop(pidFile(), folder.toString(), "node");

    assertThat(earlier.waitFor(10, TimeUnit.SECONDS)).as("stopped").isTrue();
  }

  @Test
  void stopsOneRecordedWithoutItsLauncher() throws Exception {
    Process earlier = startNaming(folder.toString());
    // As pid files were written before they named the launcher.
    Files.writeString(pidFile(), String.valueOf(earlier.pid()));

    OrphanProcesses.stop(pidFile(), folder.toString(), "node");

    assertThat(earlier.waitFor(10, TimeUnit.SECONDS)).as("stopped").isTrue();
  }

  @Test
  void forgetsThePidFileOfAProcessThatDoesNotNameTheFolder() throws Exception {
    Process other = startNaming("elsewhere");
    Files.writeString(pidFile(), other.pid() + " " + goneLauncher());

    OrphanProcesses.stop(pidFile(), folder.toString(), "node");

    assertThat(other.isAlive()).as("another process that took the pid").isTrue();
    assertThat(pidFile()).doesNotExist();
  }

  @Test
  void forgetsAnEmptyPidFile() throws Exception {
    Files.writeString(pidFile(), "");

    OrphanProcesses.stop(pidFile(), folder.toString(), "node");

    assertThat(pidFile()).doesNotExist();
  }

  private Process startNaming(String name) throws Exception {
    // A command after the sleep keeps a shell that execs its last command from replacing itself.
    Process process = new ProcessBuilder("sh", "-c", "sleep 30; true", name).start();
    started.add(process.toHandle());
    awaitCommandLineNaming(process.toHandle(), "sleep 30; true " + name);
    return process;
  }

  /** Waits until {@code process}'s command line reads and holds {@code text}. */
  private static void awaitCommandLineNaming(ProcessHandle process, String text)
      throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!process.info().commandLine().map(c -> c.contains(text)).orElse(false)) {
      assertThat(System.nanoTime()).as("command line of pid " + process.pid()).isLessThan(deadline);
      Thread.sleep(10);
    }
  }

  private static long firstLineAsPid(Process process) throws Exception {
    try (BufferedReader out =
        new BufferedReader(
            new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
      return Long.parseLong(out.readLine().trim());
    }
  }

  private static long goneLauncher() {
    return ProcessHandle.current().pid() + 1_000_000;
  }

  private Path pidFile() {
    return folder.resolve("node.pid");
  }
}
