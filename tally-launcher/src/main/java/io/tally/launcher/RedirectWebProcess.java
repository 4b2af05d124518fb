package io.tally.launcher;

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
import java.util.Optional;
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
   * A heap that holds redirect-web's caches many times over; a small young generation keeps each
   * collection short (docs/benchmarks.md, the local stack's redirect).
   */
  static final String DEFAULT_JAVA_OPTS = "-Xms256m -Xmx512m -XX:MaxGCPauseMillis=5";

  /**
   * The child JVM's first option: names it in {@code ps} and to {@link #stopOrphan}, which cannot
   * rely on the main class, since Linux shows only a command line's first 4 KiB.
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
              if (!closing) {
                LOG.error(
                    "redirect-web (pid {}) exited with code {}; see redirect-web.log. Restart"
                        + " ./tally up to start it again",
                    exited.pid(),
                    exited.exitValue());
              }
            });
  }

  /**
   * Starts redirect-web with exactly the {@code TALLY_*} settings of {@code settings} (none of this
   * JVM's own) and waits until it answers and knows the click topic.
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
    command.add("-Dlog.file=" + Files.createDirectories(logs).resolve("redirect-web.log"));
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
    Files.writeString(pidFile, String.valueOf(process.pid()));
    BufferedReader output =
        new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    try {
      int port = awaitReady(output, process);
      Thread forward = new Thread(() -> forwardRest(output), "redirect-web-output");
      forward.setDaemon(true);
      forward.start();
      return new RedirectWebProcess(process, pidFile, port);
    } catch (IOException | RuntimeException e) {
      process.destroyForcibly();
      Files.deleteIfExists(pidFile);
      throw e;
    }
  }

  private static int awaitReady(BufferedReader output, Process process) throws IOException {
    CompletableFuture<Integer> ready =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                for (String line = output.readLine(); line != null; line = output.readLine()) {
                  if (line.startsWith(ChildRedirectWeb.READY)) {
                    return Integer.parseInt(line.substring(ChildRedirectWeb.READY.length()).trim());
                  }
                  System.out.println(line);
                }
                return -1;
              } catch (IOException e) {
                return -1;
              }
            });
    try {
      int port = ready.get(STARTUP_PATIENCE.toSeconds(), TimeUnit.SECONDS);
      if (port < 0) {
        throw new IOException(
            "redirect-web exited while starting (exit code "
                + process.waitFor()
                + "); its error is above and in redirect-web.log");
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

  private static void forwardRest(BufferedReader output) {
    try {
      for (String line = output.readLine(); line != null; line = output.readLine()) {
        System.out.println(line);
      }
    } catch (IOException e) {
      // The child has gone: nothing more to show.
    }
  }

  /**
   * Waits for a redirect-web that an earlier launcher started here to stop, and stops it if it does
   * not: it exits by itself once its launcher is gone, but may still hold its port while it sends
   * its last clicks.
   */
  static void stopOrphan(Path home) {
    Path pidFile = home.resolve(PID_FILE);
    if (!Files.exists(pidFile)) {
      return;
    }
    try {
      long pid = Long.parseLong(Files.readString(pidFile).trim());
      Optional<ProcessHandle> orphan =
          ProcessHandle.of(pid)
              .filter(p -> p.pid() != ProcessHandle.current().pid())
              .filter(p -> p.info().commandLine().map(c -> c.contains(MARKER)).orElse(false));
      if (orphan.isPresent()) {
        LOG.warn("redirect-web (pid {}) of an earlier run is still running; stopping it", pid);
        orphan.get().destroy();
        try {
          orphan.get().onExit().get(STOP_PATIENCE.toSeconds(), TimeUnit.SECONDS);
        } catch (TimeoutException e) {
          orphan.get().destroyForcibly();
          orphan.get().onExit().get(10, TimeUnit.SECONDS);
        }
      }
      Files.deleteIfExists(pidFile);
    } catch (IOException
        | RuntimeException
        | InterruptedException
        | ExecutionException
        | TimeoutException e) {
      LOG.warn(
          "could not check for a redirect-web left running from {}: {}", pidFile, e.toString());
    }
  }

  int port() {
    return port;
  }

  @Override
  public void close() throws IOException, InterruptedException {
    closing = true;
    process.destroy();
    if (!process.waitFor(STOP_PATIENCE.toSeconds(), TimeUnit.SECONDS)) {
      LOG.warn("redirect-web did not stop within {} s; killing it", STOP_PATIENCE.toSeconds());
      process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }
    Files.deleteIfExists(pidFile);
  }

  @Override
  public String toString() {
    return "redirect-web (pid " + process.pid() + ")";
  }
}
