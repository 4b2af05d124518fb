package io.tally.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Programs started as a container starts them, for tests that run a deployment file's commands on
 * this machine: each with its own environment alone (plus {@code PATH} to find its programs), its
 * output in a file of its own named after it.
 */
public final class ContainerProcesses {

  private static final int TAIL_LINES = 60;

  private final Path dir;

  /** Processes whose output goes to files in {@code dir}. */
  public ContainerProcesses(Path dir) {
    this.dir = dir;
  }

  /** Starts a long-running program; the caller stops it. */
  public Process start(String name, List<String> command, Map<String, String> env) {
    ProcessBuilder builder = new ProcessBuilder(command);
    Map<String, String> environment = builder.environment();
    String path = environment.get("PATH");
    environment.clear();
    environment.put("PATH", path);
    environment.putAll(env);
    try {
      return builder.redirectErrorStream(true).redirectOutput(output(name).toFile()).start();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start " + name, e);
    }
  }

  /**
   * Runs a one-shot program to its end; its exit status, its output printed when it failed.
   *
   * @throws AssertionError when it runs longer than {@code timeoutSeconds}
   */
  public int run(String name, List<String> command, Map<String, String> env, int timeoutSeconds)
      throws InterruptedException {
    Process process = start(name, command, env);
    if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      throw new AssertionError(name + " did not end within " + timeoutSeconds + " s");
    }
    if (process.exitValue() != 0) {
      System.err.println(name + " failed:\n" + tailOf(name));
    }
    return process.exitValue();
  }

  /** The last lines a program printed so far, for a failure's message. */
  public String tailOf(String name) {
    try (Stream<String> lines = Files.lines(output(name), StandardCharsets.UTF_8)) {
      Deque<String> tail = new ArrayDeque<>();
      lines.forEach(
          line -> {
            tail.addLast(line);
            if (tail.size() > TAIL_LINES) {
              tail.removeFirst();
            }
          });
      return String.join("\n", tail);
    } catch (IOException | UncheckedIOException e) {
      return "(its output cannot be read: " + e.getMessage() + ")";
    }
  }

  /** Stops a long-running program, gently first. */
  public static void stop(Process process) throws InterruptedException {
    process.destroy();
    if (!process.waitFor(30, TimeUnit.SECONDS)) {
      process.destroyForcibly();
    }
  }

  private Path output(String name) {
    return dir.resolve(name.replace(' ', '-') + ".out");
  }
}
