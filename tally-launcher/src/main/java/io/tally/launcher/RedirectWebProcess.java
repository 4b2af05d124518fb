package io.tally.launcher;

import io.tally.embedded.GracefulStop;
import io.tally.embedded.OrphanProcesses;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * redirect-web as {@code ./tally up} runs it: in a child JVM ({@link ChildRedirectWeb}) with a heap
 * and a collector of its own, so that the broker's and the Flink MiniCluster's garbage collections
 * do not stop redirects. It logs to {@code redirect-web.log} beside the launcher's log and shows
 * its warnings on the launcher's console. Closing it stops it gracefully (SIGTERM: its buffered
 * clicks are sent first).
 */
final class RedirectWebProcess implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(RedirectWebProcess.class);

  /** The child JVM's options, in place of {@link #DEFAULT_JAVA_OPTS}. */
  static final String JAVA_OPTS_ENV = "TALLY_WEB_JAVA_OPTS";

  /**
   * A heap of which redirect-web's link cache takes a quarter; G1, named since a JVM that sees one
   * core or little memory would pick the serial collector, with a pause goal that keeps each young
   * collection of it short (docs/benchmarks.md, {@code bench stack}).
   */
  static final String DEFAULT_JAVA_OPTS = "-Xms256m -Xmx512m -XX:+UseG1GC -XX:MaxGCPauseMillis=5";

  /**
   * The child JVM's first option: names it in {@code ps}, which shows only a command line's first 4
   * KiB, and so may not reach the main class.
   */
  static final String MARKER = "-Dtally.process=redirect-web";

  private static final Duration STARTUP_PATIENCE = Duration.ofSeconds(120);
  private static final Duration STOP_PATIENCE = Duration.ofSeconds(30);
  private static final String PID_FILE = "redirect-web.pid";

  private final Process process;
  private final Path pidFile;
  private final int port;
  private volatile boolean closing;

  private RedirectWebProcess(Process process, Path pidFile, int port) {
    this.process = process;
    this.pidFile = pidFile;
    this.port = port;
    process
        .onExit()
        .thenAccept(
            exited -> {
              // 130 and 143: SIGINT or SIGTERM, as Ctrl-C in the terminal sends the child too.
              int code = exited.exitValue();
              if (!closing && code != 130 && code != 143) {
                LOG.error(
                    "redirect-web (pid {}) exited with code {}; see redirect-web.log. Restart"
                        + " ./tally up to start it again",
                    exited.pid(),
                    code);
              }
            });
  }

  /**
   * Starts redirect-web with exactly the {@code TALLY_*} settings of {@code settings} (none of this
   * JVM's own) and waits until it answers and has asked for the click topic's partitions.
   *
   * @param home where the pid file is kept, for {@link #stopOrphan}
   * @param logs where {@code redirect-web.log} is written
   * @param javaOpts the child JVM's options, whitespace-separated
   */
  static RedirectWebProcess start(
      Map<String, String> settings, Path home, Path logs, String javaOpts) throws IOException {
    List<String> command = new ArrayList<>();
    command.add(ProcessHandle.current().info().command().orElse("java"));
    command.add(MARKER);
    Arrays.stream(javaOpts.trim().split("\\s+")).filter(o -> !o.isEmpty()).forEach(command::add);
    command.add("-Dlog.file=" + logFile(Files.createDirectories(logs)));
    command.add("-Djava.io.tmpdir=" + System.getProperty("java.io.tmpdir"));
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add(ChildRedirectWeb.class.getName());
    ProcessBuilder builder =
        new ProcessBuilder(command)
            // Warnings reach the console as the launcher's own do; the log file has the rest.
            .redirectError(ProcessBuilder.Redirect.INHERIT);
    builder.environment().keySet().removeIf(name -> name.startsWith("TALLY_"));
    builder.environment().putAll(settings);
    Process process = builder.start();
    Path pidFile = home.resolve(PID_FILE);
    CompletableFuture<Integer> ready = new CompletableFuture<>();
    Thread output = new Thread(() -> readOutput(process, ready), "redirect-web-output");
    output.setDaemon(true);
    output.start();
    try {
      OrphanProcesses.record(pidFile, process);
      return new RedirectWebProcess(process, pidFile, awaitReady(ready, process));
    } catch (IOException | RuntimeException e) {
      process.destroyForcibly();
      Files.deleteIfExists(pidFile);
      throw e;
    }
  }

  /**
   * Shows the child's standard output on the launcher's, but for the {@link ChildRedirectWeb#READY}
   * line, whose port completes {@code ready}; -1 if the output ends without one.
   */
  private static void readOutput(Process process, CompletableFuture<Integer> ready) {
    try (BufferedReader output =
        new BufferedReader(
            new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
      for (String line = output.readLine(); line != null; line = output.readLine()) {
        if (!ready.isDone() && line.startsWith(ChildRedirectWeb.READY)) {
          ready.complete(Integer.parseInt(line.substring(ChildRedirectWeb.READY.length()).trim()));
        } else {
          System.out.println(line);
        }
      }
    } catch (IOException | RuntimeException e) {
      // The child has gone, or printed a READY line with no port: it did not start.
    }
    ready.complete(-1);
  }

  private static int awaitReady(CompletableFuture<Integer> ready, Process process)
      throws IOException {
    try {
      int port = ready.get(STARTUP_PATIENCE.toSeconds(), TimeUnit.SECONDS);
      if (port < 0) {
        boolean exited = process.waitFor(STOP_PATIENCE.toSeconds(), TimeUnit.SECONDS);
        throw new IOException(
            "redirect-web "
                + (exited
                    ? "exited while starting (exit code " + process.exitValue() + ")"
                    : "did not start")
                + "; its error is above and in redirect-web.log");
      }
      return port;
    } catch (TimeoutException e) {
      throw new IOException(
          "redirect-web did not start within " + STARTUP_PATIENCE.toSeconds() + " s", e);
    } catch (ExecutionException e) {
      throw new IOException("redirect-web did not start", e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while redirect-web started", e);
    }
  }

  /**
   * Stops a redirect-web that an earlier launcher started here and left running ({@link
   * OrphanProcesses}): it exits by itself once its launcher is gone, but may still hold its port
   * while it sends its last clicks. Refuses, before anything starts, when its launcher still runs:
   * that is a running {@code ./tally up} on the same home.
   */
  static void stopOrphan(Path home, Path logs) throws IOException, InterruptedException {
    OrphanProcesses.stop(home.resolve(PID_FILE), logFile(logs).toString(), "redirect-web");
  }

  private static Path logFile(Path logs) {
    return logs.resolve("redirect-web.log");
  }

  int port() {
    return port;
  }

  @Override
  public void close() throws IOException, InterruptedException {
    closing = true;
    process.destroy();
    GracefulStop.awaitOrKill(process.toHandle(), "redirect-web", STOP_PATIENCE);
    Files.deleteIfExists(pidFile);
  }

  @Override
  public String toString() {
    return "redirect-web (pid " + process.pid() + ")";
  }
}
