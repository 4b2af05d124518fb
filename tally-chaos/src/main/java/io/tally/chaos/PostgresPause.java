package io.tally.chaos;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * Pauses PostgreSQL as a hung disk or a stalled VM would: SIGSTOP to the postmaster and every process under
 * it, SIGCONT to resume. Connections stay open and nothing answers; no error is ever returned.
 */
final class PostgresPause {

  private final long postmaster;

  PostgresPause(long postmasterPid) {
    this.postmaster = postmasterPid;
  }

  void pause() throws IOException, InterruptedException {
    signal("-STOP");
  }

  void resume() throws IOException, InterruptedException {
    signal("-CONT");
  }

  private void signal(String signal) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>(List.of("kill", signal, String.valueOf(postmaster)));
    ProcessHandle.of(postmaster).ifPresent(p -> p.descendants().forEach(d -> command.add(String.valueOf(d.pid()))));
    int exit = new ProcessBuilder(command).redirectErrorStream(true).start().waitFor();
    if (exit != 0 && "-CONT".equals(signal)) {
      throw new IOException("could not resume PostgreSQL: " + command + " exited " + exit);
    }
  }
}
