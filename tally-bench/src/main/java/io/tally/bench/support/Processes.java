package io.tally.bench.support;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Commands a benchmark runs outside the JVM: git, Maven, npm, tar. */
public final class Processes {

  private static final int LINES_SHOWN_ON_FAILURE = 30;

  private Processes() {}

  /**
   * Runs {@code command} in {@code dir} and returns its output (with its errors); fails with the
   * output's last lines when it fails, or when it runs over {@code patience}.
   */
  public static String run(Path dir, Duration patience, String... command)
      throws IOException, InterruptedException {
    Path output = Files.createTempFile("tally-bench", ".out");
    try {
      Process process =
          new ProcessBuilder(command)
              .directory(dir.toFile())
              .redirectErrorStream(true)
              .redirectOutput(output.toFile())
              .start();
      if (!process.waitFor(patience.toMillis(), TimeUnit.MILLISECONDS)) {
        process.destroyForcibly();
        throw new IllegalStateException(String.join(" ", command) + " ran over " + patience);
      }
      String text = Files.readString(output, StandardCharsets.UTF_8);
      if (process.exitValue() != 0) {
        List<String> lines = text.lines().toList();
        throw new IllegalStateException(
            String.join(" ", command)
                + " failed with "
                + process.exitValue()
                + " in "
                + dir
                + ":\n"
                + String.join(
                    "\n",
                    lines.subList(
                        Math.max(0, lines.size() - LINES_SHOWN_ON_FAILURE), lines.size())));
      }
      return text;
    } finally {
      Files.deleteIfExists(output);
    }
  }
}
