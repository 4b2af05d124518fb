package io.tally.local;

import io.tally.embedded.Ports;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.flink.api.common.JobID;

/**
 * The click job in a child JVM ({@link ChildClickJob}) with its checkpoints retained in a folder:
 * started, killed with SIGKILL, and started again from the newest complete checkpoint, as an
 * operator's supervisor would after a crash. Counts the hard kills and, over every life of the job,
 * Flink's own restarts.
 */
public final class ClickJobProcess implements RunningClickJob, AutoCloseable {

  private final Path dir;
  private final List<String> jobArgs;
  private final String classPath;
  private final int restPort;
  private final FlinkRest rest;
  private Process process;
  private String jobId;
  private int kills;
  private long flinkRestartsOfEarlierLives;

  /**
   * A job whose checkpoints and log live under {@code dir}; {@code jobArgs} are the click job's
   * flags.
   */
  public ClickJobProcess(Path dir, List<String> jobArgs) throws IOException {
    this(dir, jobArgs, System.getProperty("java.class.path"));
  }

  /**
   * As {@link #ClickJobProcess(Path, List)}, the job's JVM running the classes of {@code classPath}
   * (another build's, which must have {@link ChildClickJob}).
   */
  public ClickJobProcess(Path dir, List<String> jobArgs, String classPath) throws IOException {
    this.dir = Files.createDirectories(dir);
    this.jobArgs = List.copyOf(jobArgs);
    this.classPath = classPath;
    this.restPort = Ports.ephemeral();
    this.rest = FlinkRest.local(restPort);
  }

  /** The job's JVM, while one runs. */
  public Optional<ProcessHandle> processHandle() {
    return process == null || !process.isAlive()
        ? Optional.empty()
        : Optional.of(process.toHandle());
  }

  public Path checkpoints() {
    return dir.resolve("checkpoints");
  }

  /**
   * Starts the job from {@code checkpoint}, or with no state when empty; returns once every task
   * runs.
   */
  public void start(Optional<Path> checkpoint) throws Exception {
    if (process != null && process.isAlive()) {
      throw new IllegalStateException(
          "the click job's JVM is still running; kill or close it first");
    }
    List<String> command = new ArrayList<>();
    command.add(ProcessHandle.current().info().command().orElse("java"));
    // The same --add-opens as this JVM: Flink needs them on Java 17.
    ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
        .filter(a -> a.startsWith("--add-"))
        .forEach(command::add);
    command.add("-Xmx1g");
    command.add("-Dlog.file=" + dir.resolve("job.log"));
    command.add("-Djava.io.tmpdir=" + Files.createDirectories(dir.resolve("tmp")));
    command.add("-cp");
    command.add(classPath);
    command.add(ChildClickJob.class.getName());
    command.add("--rest-port=" + restPort);
    command.add("--tmp-dir=" + dir.resolve("tmp"));
    checkpoint.ifPresent(path -> command.add("--recover-from=" + path));
    command.addAll(jobArgs);
    command.add("--checkpoint-dir=" + checkpoints().toUri());
    process =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("job.out").toFile()))
            .start();
    jobId = null;
    awaitRunning(Duration.ofSeconds(120));
  }

  /** Starts the job from its newest retained checkpoint (with no state if there is none yet). */
  public Optional<Path> restartFromLatest() throws Exception {
    Optional<Path> latest = Checkpoints.latest(checkpoints());
    start(latest);
    return latest;
  }

  /** SIGKILL, as a crashed machine or an OOM killer would; no checkpoint, no cancel, no flush. */
  public void killHard() throws InterruptedException {
    try {
      flinkRestartsOfEarlierLives += flinkRestarts();
    } finally {
      // Killed even when the restart count cannot be read: the kill is the scenario's fault.
      process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
      kills++;
    }
  }

  /**
   * Stops the job with a savepoint under this job's folder, as a planned stop or an upgrade does,
   * and waits for its JVM to exit; returns the savepoint to start from.
   */
  public Path stopWithSavepoint() throws IOException, InterruptedException {
    Path savepoints = Files.createDirectories(dir.resolve("savepoints"));
    long asked = System.currentTimeMillis();
    try {
      rest.stopWithSavepoint(
          JobID.fromHexString(jobId), Optional.of(savepoints.toUri().toString()));
    } catch (FlinkCommandFailure e) {
      // The JVM exits as soon as its job has stopped, which may be before the REST client has
      // read the savepoint's path: the folder tells it.
    }
    if (!process.waitFor(60, TimeUnit.SECONDS)) {
      throw new IllegalStateException("the click job did not stop with a savepoint within 60 s");
    }
    try (Stream<Path> written = Files.list(savepoints)) {
      return written
          .filter(sp -> Files.isRegularFile(sp.resolve("_metadata")))
          .filter(sp -> sp.resolve("_metadata").toFile().lastModified() >= asked - 1_000)
          .max(Comparator.comparingLong(sp -> sp.resolve("_metadata").toFile().lastModified()))
          .orElseThrow(() -> new IllegalStateException("the job stopped without a savepoint"));
    }
  }

  /** Waits until the job's next checkpoint after now has completed. */
  public void awaitCheckpoint(Duration timeout) throws InterruptedException {
    long before = completedCheckpoints();
    long deadline = System.nanoTime() + timeout.toNanos();
    while (completedCheckpoints() <= before) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("no checkpoint completed within " + timeout);
      }
      Thread.sleep(200);
    }
  }

  private long completedCheckpoints() {
    try {
      return rest.checkpoints(jobId).path("counts").path("completed").asLong();
    } catch (RuntimeException e) {
      return -1;
    }
  }

  public int kills() {
    return kills;
  }

  /** Kills plus Flink's own restarts over every life of the job. */
  @Override
  public long restarts() throws InterruptedException {
    return kills + flinkRestartsOfEarlierLives + flinkRestarts();
  }

  @Override
  public FlinkRest rest() {
    return rest;
  }

  @Override
  public String jobId() {
    return jobId;
  }

  public Path logFile() {
    return dir.resolve("job.log");
  }

  @Override
  public List<Path> logFiles() {
    return List.of(logFile(), dir.resolve("job.out"));
  }

  /** Flink's restarts of the current life; 0 when the JVM is gone. */
  long flinkRestarts() throws InterruptedException {
    if (jobId == null || process == null || !process.isAlive()) {
      return 0;
    }
    return rest.restarts(jobId);
  }

  private void awaitRunning(Duration timeout) throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) {
        throw new IllegalStateException(
            "the click job's JVM exited with "
                + process.exitValue()
                + "; the end of "
                + dir.resolve("job.out")
                + ":\n"
                + lastLines(dir.resolve("job.out"), 15));
      }
      try {
        List<String> running = rest.jobsWithEveryTaskRunning();
        if (!running.isEmpty()) {
          jobId = running.get(0);
          return;
        }
      } catch (RuntimeException e) {
        // REST not up yet.
      }
      Thread.sleep(250);
    }
    throw new IllegalStateException(
        "the click job did not reach RUNNING within "
            + timeout
            + "; see "
            + dir.resolve("job.log"));
  }

  @Override
  public void close() throws InterruptedException {
    if (process != null && process.isAlive()) {
      process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
    }
    rest.close();
  }

  private static String lastLines(Path file, int count) {
    try {
      List<String> lines = Files.readAllLines(file);
      return String.join("\n", lines.subList(Math.max(0, lines.size() - count), lines.size()));
    } catch (IOException e) {
      return "(unreadable: " + e.getMessage() + ")";
    }
  }
}
