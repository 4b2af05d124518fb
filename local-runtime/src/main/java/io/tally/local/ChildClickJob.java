package io.tally.local;

import io.tally.clickjob.ClickJobOptions;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Unmatched;

/**
 * The click job on a MiniCluster with its web UI ({@link LocalClickJob}), alone in a JVM: {@link
 * ClickJobProcess} starts this in a child process so that it can be killed hard (SIGKILL) and
 * started again from its latest retained checkpoint. Every flag it does not know goes to the job
 * ({@link ClickJobOptions}).
 */
@Command(name = "child-click-job", description = "The click job on a MiniCluster of its own JVM.")
public final class ChildClickJob implements Callable<Integer> {

  @Option(
      names = "--rest-port",
      required = true,
      description = "port of the Flink web UI and REST API")
  int restPort;

  @Option(names = "--recover-from", description = "retained checkpoint to restore, if any")
  Path recoverFrom;

  @Option(names = "--tmp-dir", required = true, description = "Flink's temporary files")
  Path tmpDir;

  @Unmatched List<String> jobArgs = new ArrayList<>();

  public static void main(String[] args) {
    System.exit(new CommandLine(new ChildClickJob()).execute(args));
  }

  @Override
  public Integer call() throws Exception {
    ClickJobOptions options = ClickJobOptions.parse(jobArgs.toArray(String[]::new));
    LocalClickJob.runToEnd(
        options,
        LocalClickJob.Setup.of(restPort, tmpDir)
            .restoringFrom(Optional.ofNullable(recoverFrom), false));
    return 0;
  }
}
