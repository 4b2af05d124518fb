package io.tally.launcher;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a start does with the redirect-web an earlier one left in its home: one whose launcher still
 * runs belongs to a running stack and is left alone; one whose launcher has gone is stopped. A
 * shell that sleeps, named as redirect-web's JVM is, stands in for it.
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
  void refusesWhileTheLauncherOfTheEarlierOneStillRuns() throws Exception {
    earlier = startLookalike();
    // This JVM started it, as a running launcher did.
    writePidFile(earlier.pid(), ProcessHandle.current().pid());

    assertThatThrownBy(() -> RedirectWebProcess.stopOrphan(home))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("of a running ./tally up (pid " + ProcessHandle.current().pid());
    assertThat(earlier.isAlive()).as("a running stack's redirect-web is left alone").isTrue();
  }

  @Test
  void stopsOneWhoseLauncherHasGone() throws Exception {
    earlier = startLookalike();
    long goneLauncher = ProcessHandle.current().pid() + 1_000_000;
    writePidFile(earlier.pid(), goneLauncher);

    RedirectWebProcess.stopOrphan(home);

    assertThat(earlier.waitFor(10, TimeUnit.SECONDS)).as("stopped").isTrue();
    assertThat(home.resolve("redirect-web.pid")).doesNotExist();
  }

  @Test
  void forgetsAPidFileOfAProcessThatIsNotRedirectWeb() throws Exception {
    earlier = new ProcessBuilder("sh", "-c", "sleep 30").start();
    writePidFile(earlier.pid(), ProcessHandle.current().pid() + 1_000_000);

    RedirectWebProcess.stopOrphan(home);

    assertThat(earlier.isAlive()).as("another process that took the pid").isTrue();
    assertThat(home.resolve("redirect-web.pid")).doesNotExist();
  }

  private static Process startLookalike() throws Exception {
    return new ProcessBuilder("sh", "-c", "sleep 30", RedirectWebProcess.MARKER).start();
  }

  private void writePidFile(long child, long launcher) throws Exception {
    Files.writeString(home.resolve("redirect-web.pid"), child + " " + launcher);
  }
}
