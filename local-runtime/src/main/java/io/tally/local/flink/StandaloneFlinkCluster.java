package io.tally.local.flink;

import io.tally.embedded.GracefulStop;
import io.tally.embedded.OrphanProcesses;
import io.tally.local.FlinkCommandFailure;
import io.tally.local.FlinkRest;
import io.tally.local.RestEndpoint;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Flink standalone session cluster of separate JVMs on this machine: one JobManager and {@value
 * #TASK_MANAGERS} TaskManagers, started from Flink's Maven jars the way Flink's own scripts start
 * them from a distribution, each with its log file (shown in the web UI) and its console output
 * beside it in the logs folder. Closing stops the TaskManagers, then the JobManager.
 */
public final class StandaloneFlinkCluster implements AutoCloseable {

  public static final int TASK_MANAGERS = 2;

  private static final Logger LOG = LoggerFactory.getLogger(StandaloneFlinkCluster.class);
  private static final String JOB_MANAGER_MAIN =
      "org.apache.flink.runtime.entrypoint.StandaloneSessionClusterEntrypoint";
  private static final String TASK_MANAGER_MAIN =
      "org.apache.flink.runtime.taskexecutor.TaskManagerRunner";
  private static final String RESOURCE_PARAMS_MAIN =
      "org.apache.flink.runtime.util.bash.BashJavaUtils";
  private static final String RESULT_PREFIX = "BASH_JAVA_UTILS_EXEC_RESULT:";
  private static final Duration START_TIMEOUT = Duration.ofSeconds(120);

  private final FlinkInstall install;
  private final Path confDir;
  private final Path logs;
  private final RestEndpoint endpoint;
  private Process jobManager;
  private final Map<String, Process> taskManagers = new LinkedHashMap<>();
  private List<List<String>> taskManagerParams;

  private StandaloneFlinkCluster(
      FlinkInstall install, Path confDir, Path logs, RestEndpoint endpoint) {
    this.install = install;
    this.confDir = confDir;
    this.logs = logs;
    this.endpoint = endpoint;
  }

  /**
   * Starts the cluster on the config in {@code confDir} (see {@link FlinkConf#writeCluster}) and
   * returns once every TaskManager has registered; on failure stops what had started. Call {@link
   * #stopOrphans} first.
   */
  public static StandaloneFlinkCluster start(
      FlinkInstall install, Path confDir, Path logs, int restPort) {
    StandaloneFlinkCluster cluster =
        new StandaloneFlinkCluster(install, confDir, logs, RestEndpoint.local(restPort));
    try {
      cluster.startAll();
      return cluster;
    } catch (RuntimeException | Error e) {
      cluster.close();
      throw e;
    }
  }

  private void startAll() {
    long starting = System.nanoTime();
    try {
      Files.createDirectories(logs);
      Files.createDirectories(pidDir());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    // Each process's memory flags (-Xmx, direct memory, metaspace) and the sizes behind them, as
    // Flink's scripts ask BashJavaUtils for them; without the -D sizes a TaskManager refuses to
    // start.
    List<List<String>> jm = resourceParams("GET_JM_RESOURCE_PARAMS");
    jobManager = startProcess("jobmanager", jm.get(0), JOB_MANAGER_MAIN, jm.get(1));
    taskManagerParams = resourceParams("GET_TM_RESOURCE_PARAMS");
    for (int i = 1; i <= TASK_MANAGERS; i++) {
      launchTaskManager("taskmanager-" + i);
    }
    awaitTaskManagers();
    LOG.info(
        "Flink cluster up: JobManager and {} TaskManagers registered in {} ms",
        TASK_MANAGERS,
        (System.nanoTime() - starting) / 1_000_000);
  }

  private void launchTaskManager(String id) {
    List<String> args = new ArrayList<>(taskManagerParams.get(1));
    // A stable id, so that the web UI, the REST API and the logs name the same TaskManager across
    // restarts.
    args.addAll(List.of("-D", "taskmanager.resource-id=" + id));
    taskManagers.put(id, startProcess(id, taskManagerParams.get(0), TASK_MANAGER_MAIN, args));
  }

  /**
   * Starts TaskManager {@code id} again after it died, as a supervisor (systemd, Kubernetes) would,
   * and returns once every TaskManager has registered with the JobManager.
   */
  public void restartTaskManager(String id) {
    Process process = taskManagers.get(id);
    if (process == null) {
      throw new IllegalArgumentException("no TaskManager " + id);
    }
    if (!process.isAlive()) {
      launchTaskManager(id);
    }
    awaitTaskManagers();
  }

  /**
   * BashJavaUtils' two answers: the JVM flags, then the {@code -D} options for the process's
   * arguments.
   */
  private List<List<String>> resourceParams(String command) {
    List<String> cmd =
        FlinkJvm.command(
            install,
            confDir,
            logs.resolve("flink-resource-params.log"),
            List.of("-Xmx128m"),
            RESOURCE_PARAMS_MAIN,
            List.of(command, "--configDir", confDir.toString()));
    try {
      Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes());
      if (p.waitFor() != 0) {
        throw new IllegalStateException(
            "Flink refused its configuration in "
                + confDir
                + ": "
                + out.lines().filter(l -> l.contains("Exception")).findFirst().orElse(out));
      }
      List<List<String>> results =
          out.lines()
              .filter(l -> l.startsWith(RESULT_PREFIX))
              .map(
                  l ->
                      Arrays.stream(l.substring(RESULT_PREFIX.length()).trim().split("\\s+"))
                          .filter(a -> !a.isEmpty())
                          .toList())
              .toList();
      if (results.size() < 2) {
        throw new IllegalStateException("BashJavaUtils " + command + " printed no result: " + out);
      }
      return results;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  private Process startProcess(
      String name, List<String> jvmFlags, String mainClass, List<String> args) {
    List<String> fullArgs = new ArrayList<>(List.of("--configDir", confDir.toString()));
    fullArgs.addAll(args);
    List<String> cmd =
        FlinkJvm.command(
            install,
            confDir,
            logs.resolve("flink-" + name + ".log"),
            jvmFlags,
            mainClass,
            fullArgs);
    try {
      Process process =
          new ProcessBuilder(cmd)
              .redirectErrorStream(true)
              .redirectOutput(
                  ProcessBuilder.Redirect.appendTo(logs.resolve("flink-" + name + ".out").toFile()))
              .start();
      OrphanProcesses.record(pidDir().resolve(name + ".pid"), process);
      LOG.info("started Flink {} (pid {})", name, process.pid());
      return process;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start Flink's " + name, e);
    }
  }

  private void awaitTaskManagers() {
    long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
    try (FlinkRest rest = FlinkRest.connect(endpoint)) {
      while (true) {
        requireAlive("jobmanager", jobManager);
        taskManagers.forEach(this::requireAlive);
        try {
          if (rest.overview().getNumTaskManagersConnected() == TASK_MANAGERS) {
            return;
          }
        } catch (IllegalStateException notYet) {
          // The REST endpoint comes up a few seconds after the JVM.
        }
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException(
              "the Flink cluster did not come up within "
                  + START_TIMEOUT
                  + "; see "
                  + logs
                  + "/flink-*.log");
        }
        Thread.sleep(250);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while starting the Flink cluster", e);
    }
  }

  private void requireAlive(String name, Process process) {
    if (!process.isAlive()) {
      throw new IllegalStateException(
          "Flink's "
              + name
              + " exited with status "
              + process.exitValue()
              + " while starting; see "
              + logs.resolve("flink-" + name + ".log")
              + " and .out");
    }
  }

  public RestEndpoint endpoint() {
    return endpoint;
  }

  /**
   * The TaskManager processes by resource id ({@code taskmanager-1} ...), as the REST API names
   * them.
   */
  public Map<String, Process> taskManagers() {
    return Map.copyOf(taskManagers);
  }

  private Path pidDir() {
    return pidDir(confDir);
  }

  private static Path pidDir(Path confDir) {
    return confDir.resolveSibling("pids");
  }

  /**
   * Stops the processes of a cluster on {@code confDir} that a launcher killed with {@code kill -9}
   * left behind: they are no children of the launcher, and would hold the ports. Only a process
   * whose command line names that config folder is stopped, so a recycled pid is left alone.
   */
  public static void stopOrphans(Path confDir) {
    Path pidDir = pidDir(confDir);
    if (!Files.isDirectory(pidDir)) {
      return;
    }
    try (var files = Files.list(pidDir)) {
      for (Path pidFile : files.toList()) {
        OrphanProcesses.stop(
            pidFile,
            confDir.toString(),
            "Flink's " + pidFile.getFileName().toString().replace(".pid", ""));
      }
    } catch (IllegalStateException runningOrStuck) {
      throw runningOrStuck;
    } catch (Exception e) {
      throw new FlinkCommandFailure(
          "cannot stop the Flink processes of an earlier start (pid files in " + pidDir + ")", e);
    }
  }

  @Override
  public void close() {
    taskManagers.values().forEach(Process::destroy);
    taskManagers.forEach(this::awaitExit);
    if (jobManager != null) {
      jobManager.destroy();
      awaitExit("jobmanager", jobManager);
    }
  }

  private void awaitExit(String name, Process process) {
    try {
      GracefulStop.awaitOrKill(process.toHandle(), "Flink's " + name, Duration.ofSeconds(30));
      Files.deleteIfExists(pidDir().resolve(name + ".pid"));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (IOException e) {
      LOG.warn("cannot delete the pid file of Flink's {}", name, e);
    }
  }
}
