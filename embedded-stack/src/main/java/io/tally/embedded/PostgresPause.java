package io.tally.embedded;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Pauses a PostgreSQL as a hung disk, a stalled VM or a network partition would: SIGSTOP to the
 * postmaster and every process under it, SIGCONT to resume. Connections stay open and nothing
 * answers; no error is ever returned to a client. For tests and fault drills on this machine's
 * PostgreSQL processes.
 */
public final class PostgresPause {

  private final ProcessHandle postmaster;
  private final Set<ProcessHandle> paused = new LinkedHashSet<>();

  private PostgresPause(ProcessHandle postmaster) {
    this.postmaster = postmaster;
  }

  /**
   * The PostgreSQL whose data folder is {@code dataDir}, by the pid in its {@code postmaster.pid}.
   */
  public static PostgresPause of(Path dataDir) throws IOException {
    return new PostgresPause(
        EmbeddedPostgresServer.postmaster(dataDir)
            .orElseThrow(() -> new IOException("no PostgreSQL is running on " + dataDir)));
  }

  /**
   * Stops the postmaster first, so that it forks no new backend, then every process under it;
   * returns the processes under it (backends, checkpointer, WAL writer ...).
   */
  public List<ProcessHandle> pause() throws IOException, InterruptedException {
    signal("-STOP", List.of(postmaster));
    paused.add(postmaster);
    List<ProcessHandle> children = postmaster.descendants().toList();
    signal("-STOP", children);
    paused.addAll(children);
    return children;
  }

  /** Lets every paused process, and anything under the postmaster now, run again. */
  public void resume() throws IOException, InterruptedException {
    Set<ProcessHandle> all = new LinkedHashSet<>(paused);
    all.add(postmaster);
    postmaster.descendants().forEach(all::add);
    signal("-CONT", new ArrayList<>(all));
    paused.clear();
  }

  /**
   * Sends {@code signal} to every process. {@code kill} fails when one of them has exited since it
   * was listed (a backend whose client disconnected), which is no failure here; it is one when they
   * all live.
   */
  private static void signal(String signal, List<ProcessHandle> processes)
      throws IOException, InterruptedException {
    if (processes.isEmpty()) {
      return;
    }
    List<String> command = new ArrayList<>(List.of("kill", signal));
    processes.forEach(p -> command.add(String.valueOf(p.pid())));
    int exit =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.DISCARD)
            .start()
            .waitFor();
    if (exit != 0 && processes.stream().allMatch(ProcessHandle::isAlive)) {
      throw new IOException(String.join(" ", command) + " exited " + exit);
    }
  }
}
