package io.tally.chaos;

import io.tally.clickjob.ClickCountJob;
import io.tally.clickjob.ClickJobOptions;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Unmatched;

/**
 * The click job on a MiniCluster with its web UI, alone in a JVM, as {@code ./tally up} runs it: the chaos
 * scenarios start this in a child process so that they can kill it hard (SIGKILL) and start it again from
 * its latest retained checkpoint. Every flag it does not know goes to the job ({@link ClickJobOptions}).
 */
@Command(name = "child-click-job", description = "The click job on a MiniCluster of its own, for the chaos scenarios.")
public final class ChildClickJob implements Callable<Integer> {

  @Option(names = "--rest-port", required = true, description = "port of the Flink web UI and REST API")
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
    Configuration conf = ClickCountJob.configuration(options);
    conf.set(RestOptions.PORT, restPort);
    conf.set(RestOptions.ADDRESS, "localhost");
    conf.setString("rest.bind-address", "localhost");
    conf.setString("taskmanager.numberOfTaskSlots", String.valueOf(options.parallelism()));
    conf.setString("taskmanager.memory.managed.size", "256m");
    // The scenarios read the job's restart count from the REST API; the default 10 s would show an old one.
    conf.setString("metrics.fetcher.update-interval", "1000");
    conf.setString("io.tmp.dirs", tmpDir.toString());
    conf.setString("web.tmpdir", tmpDir.toString());
    if (recoverFrom != null) {
      conf.setString("execution.state-recovery.path", recoverFrom.toUri().toString());
    }
    StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironmentWithWebUI(conf);
    ClickCountJob.build(env, options);
    env.execute(ClickCountJob.JOB_NAME);
    return 0;
  }
}
