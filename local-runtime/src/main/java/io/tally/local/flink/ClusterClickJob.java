package io.tally.local.flink;

import com.fasterxml.jackson.databind.JsonNode;
import io.tally.embedded.Ports;
import io.tally.local.FlinkRest;
import io.tally.local.RunningClickJob;
import io.tally.local.Teardown;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * The click job on a standalone Flink cluster of its own (a JobManager and {@value
 * StandaloneFlinkCluster#TASK_MANAGERS} TaskManagers in JVMs of their own, checkpoints and logs
 * under one folder), submitted with Flink's CLI as a user would. A TaskManager can be killed with
 * SIGKILL and started again; the job recovers on the slots left, as Flink's restart strategy does
 * on a real cluster. Closing cancels nothing: it stops the cluster's JVMs.
 */
public final class ClusterClickJob implements RunningClickJob, AutoCloseable {

  private static final Duration RUNNING_TIMEOUT = Duration.ofSeconds(120);

  private final Path dir;
  private final StandaloneFlinkCluster cluster;
  private final FlinkRest rest;
  private final String jobId;
  private final Teardown teardown;

  private ClusterClickJob(
      Path dir, StandaloneFlinkCluster cluster, FlinkRest rest, String jobId, Teardown teardown) {
    this.dir = dir;
    this.cluster = cluster;
    this.rest = rest;
    this.jobId = jobId;
    this.teardown = teardown;
  }

  /**
   * Starts a cluster under {@code dir} with the shipped config and {@code flinkProperties} in place
   * of its lines, submits the click job with {@code jobFlags}, and returns once every task runs.
   */
  public static ClusterClickJob start(
      FlinkInstall install, Path dir, Map<String, String> flinkProperties, List<String> jobFlags)
      throws Exception {
    Teardown teardown = new Teardown();
    try {
      Files.createDirectories(dir);
      Path confDir = dir.resolve("flink").resolve("conf");
      StandaloneFlinkCluster.stopOrphans(confDir);
      int restPort = Ports.ephemeral();
      FlinkConf.writeCluster(confDir, dir, restPort, flinkProperties);
      StandaloneFlinkCluster cluster =
          StandaloneFlinkCluster.start(install, confDir, dir.resolve("logs"), restPort);
      teardown.add(cluster);
      FlinkRest rest = FlinkRest.connect(cluster.endpoint());
      teardown.add(rest);
      String jobId =
          new FlinkCli(install, cluster.endpoint(), dir.resolve("flink").resolve("cli"))
              .runDetached(
                  new FlinkCli.Submission(install.clickJobJar(), jobFlags, Optional.empty(), false))
              .toHexString();
      ClusterClickJob job = new ClusterClickJob(dir, cluster, rest, jobId, teardown);
      job.awaitAllTasksRunning(RUNNING_TIMEOUT);
      return job;
    } catch (Exception | Error e) {
      teardown.close();
      throw e;
    }
  }

  /** The TaskManagers by resource id ({@code taskmanager-1} ...). */
  public Map<String, Process> taskManagers() {
    return cluster.taskManagers();
  }

  /**
   * The TaskManager that runs the first subtask of the vertex whose name contains {@code vertex}.
   */
  public String taskManagerRunning(String vertex) {
    String vertexId = rest.vertexId(jobId, vertex);
    JsonNode subtasks = rest.get("/jobs/" + jobId + "/vertices/" + vertexId).path("subtasks");
    return subtasks.get(0).path("taskmanager-id").asText();
  }

  /** Kills TaskManager {@code id} with SIGKILL. */
  public void killTaskManager(String id) throws InterruptedException {
    Process process = cluster.taskManagers().get(id);
    if (process == null) {
      throw new IllegalArgumentException("no TaskManager " + id);
    }
    process.destroyForcibly().waitFor();
  }

  /** Starts TaskManager {@code id} again; returns once every TaskManager has registered. */
  public void restartTaskManager(String id) {
    cluster.restartTaskManager(id);
  }

  /** TaskManagers registered with the JobManager now. */
  public int registeredTaskManagers() {
    return rest.overview().getNumTaskManagersConnected();
  }

  /**
   * Whether the job is RUNNING with every task running.
   *
   * @throws RuntimeException when the REST API does not answer, which says neither
   */
  public boolean allTasksRunning() {
    return rest.jobsWithEveryTaskRunning().contains(jobId);
  }

  private boolean answersAllTasksRunning() {
    try {
      return allTasksRunning();
    } catch (RuntimeException notAnswering) {
      return false;
    }
  }

  private void awaitAllTasksRunning(Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!answersAllTasksRunning()) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(
            "the click job did not reach RUNNING within "
                + timeout
                + "; see "
                + dir.resolve("logs"));
      }
      Thread.sleep(250);
    }
  }

  @Override
  public FlinkRest rest() {
    return rest;
  }

  @Override
  public String jobId() {
    return jobId;
  }

  @Override
  public long restarts() throws InterruptedException {
    return rest.restarts(jobId);
  }

  @Override
  public List<Path> logFiles() {
    try (Stream<Path> files = Files.list(dir.resolve("logs"))) {
      return files.filter(f -> f.getFileName().toString().startsWith("flink-")).toList();
    } catch (IOException e) {
      return List.of();
    }
  }

  @Override
  public void close() {
    teardown.close();
  }
}
