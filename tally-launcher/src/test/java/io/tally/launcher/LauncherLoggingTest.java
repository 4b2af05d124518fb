package io.tally.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.config.Configurator;
import org.apache.logging.log4j.status.StatusLogger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Tests for the launcher's {@code log4j2.xml}: the console of {@code ./tally up} shows Tally's own
 * warnings, not the warnings Kafka and Flink log while running (delegation tokens, metric name
 * collisions, ...), which go to the log file with everything else.
 */
class LauncherLoggingTest {

  @TempDir Path dir;

  @Test
  void internalsWarnInTheFileOnlyWhileTallysWarningsAlsoReachTheConsole() throws Exception {
    Path logFile = dir.resolve("tally.log");
    ByteArrayOutputStream console = new ByteArrayOutputStream();
    PrintStream stderr = System.err;
    String logFileBefore = System.getProperty("log.file");
    System.setProperty("log.file", logFile.toString());
    // The console appender takes System.err when the configuration starts.
    System.setErr(new PrintStream(console, true, StandardCharsets.UTF_8));
    LoggerContext context =
        Configurator.initialize(
            "launcher-logging-test",
            getClass().getClassLoader(),
            getClass().getClassLoader().getResource("log4j2.xml").toURI());
    Level log4jOwnWarnings = StatusLogger.getLogger().getFallbackListener().getStatusLevel();
    try {
      context.getLogger("org.apache.kafka.clients.NetworkClient").warn("kafka internals warn");
      context
          .getLogger("org.apache.flink.runtime.security.token.DefaultDelegationTokenManager")
          .warn("no delegation token");
      context
          .getLogger("org.apache.flink.metrics.MetricGroup")
          .warn("Name collision: Group already contains a Metric");
      context
          .getLogger("org.apache.flink.runtime.taskmanager.Task")
          .info("task switched to RUNNING");
      context.getLogger("io.tally.launcher.LocalStack").warn("tally warns");
      context.getLogger("io.tally.launcher.LocalStack").info("tally informs");
    } finally {
      Configurator.shutdown(context);
      System.setErr(stderr);
      if (logFileBefore == null) {
        System.clearProperty("log.file");
      } else {
        System.setProperty("log.file", logFileBefore);
      }
    }

    // Log4j's own status lines go to a console stream of their own: "WARN found 4 argument
    // placeholders, but provided 5" when a Flink log call passes one argument too many.
    assertThat(log4jOwnWarnings)
        .as("Log4j's own messages on the console from")
        .isEqualTo(Level.ERROR);
    assertThat(console.toString(StandardCharsets.UTF_8).lines().toList())
        .as("the console")
        .singleElement()
        .asString()
        .endsWith("LocalStack - tally warns");
    assertThat(Files.readString(logFile))
        .contains(
            "kafka internals warn",
            "no delegation token",
            "Name collision",
            "task switched to RUNNING",
            "tally warns",
            "tally informs");
  }
}
