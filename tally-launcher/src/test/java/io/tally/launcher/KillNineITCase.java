package io.tally.launcher;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tally.embedded.Ports;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code ./tally up} killed with {@code kill -9} while clicks sit in an open window, then started
 * again: the job resumes from its latest retained checkpoint (window contents, dedup set and
 * offsets together), so no click is lost and none is counted twice. The checkpoint holds the
 * clicks, the window is still open when the JVM dies, and the restarted job says (through Flink's
 * REST API) that it restored a checkpoint: a start without state would count the same, since it
 * rereads the day.
 */
class KillNineITCase {

  private final int httpPort = Ports.ephemeral();
  private final int pgPort = Ports.ephemeral();
  private final int kafkaPort = Ports.ephemeral();
  private final int flinkUiPort = Ports.ephemeral();
  private Process tally;
  private StackSettings tallySettings;
  private int starts;

  @TempDir Path home;

  @AfterEach
  void tearDown() throws Exception {
    if (tally != null) {
      tally.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
    }
    // A stack killed with -9 cannot take back the settings it left for other shells.
    if (tallySettings != null) {
      tallySettings.takeBackFrom(StackSettings.RUNNING);
    }
  }

  @Test
  void killedWithOpenWindowsItResumesWithoutLosingOrDoublingAClick() throws Exception {
    tally = startTally();
    LinkClient client =
        new LinkClient("http://localhost:" + httpPort, "kill-nine-key-0123456789abcdefghijklm");
    String code = client.createLink("https://example.com/kill-nine");
    // Early in a minute: it closes (the watermark follows the clock when traffic stops) about 85 s
    // after it starts, long after the checkpoint below.
    StackProbe.awaitMinuteYoungerThan(20);
    long minuteEnd = System.currentTimeMillis() / 60_000 * 60_000 + 60_000;
    client.follow(code, 5);
    await()
        .atMost(Duration.ofSeconds(60))
        .pollInterval(Duration.ofMillis(500))
        .until(() -> StackProbe.minuteTotal(jdbcUrl(), code, "clicks") == 5);
    StackProbe.awaitCheckpointAfterNow("http://localhost:" + flinkUiPort);
    assertThat(StackProbe.closedBefore(jdbcUrl()))
        .as("the clicks' minute is still open at the kill")
        .isLessThan(minuteEnd);

    List<ProcessHandle> redirectWeb =
        tally
            .descendants()
            .filter(
                p ->
                    p.info()
                        .commandLine()
                        .map(c -> c.contains(RedirectWebProcess.MARKER))
                        .orElse(false))
            .toList();
    assertThat(redirectWeb).as("redirect-web in a JVM of its own").hasSize(1);
    tally.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
    assertThat(tally.exitValue()).as("killed, not stopped").isEqualTo(137);
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () ->
                assertThat(redirectWeb.get(0).isAlive())
                    .as("redirect-web goes with the launcher that started it")
                    .isFalse());

    tally = startTally();
    assertThat(StackProbe.restoredCheckpoint("http://localhost:" + flinkUiPort))
        .as("the job restored a checkpoint")
        .isPresent();
    client.follow(code, 2);
    await()
        .atMost(Duration.ofSeconds(180))
        .pollInterval(Duration.ofSeconds(2))
        .until(() -> StackProbe.minuteTotal(jdbcUrl(), code, "clicks") == 7);
    // A bot's click on the same link in every partition, after all the others (replays included):
    // once they are counted, every human click before them has been.
    int markers = StackProbe.botClickInEveryPartition("localhost:" + kafkaPort, code);
    await()
        .atMost(Duration.ofSeconds(60))
        .pollInterval(Duration.ofSeconds(1))
        .until(() -> StackProbe.minuteTotal(jdbcUrl(), code, "bot_clicks") == markers);
    assertThat(StackProbe.minuteTotal(jdbcUrl(), code, "clicks")).isEqualTo(7);
  }

  private Process startTally() throws IOException {
    List<String> command = new ArrayList<>();
    command.add(ProcessHandle.current().info().command().orElse("java"));
    command.addAll(List.of(System.getProperty("flink.jvm.opens", "").trim().split("\\s+")));
    command.add("-Xmx1g");
    command.add("-Djava.io.tmpdir=" + Files.createDirectories(home.resolve("tmp")));
    command.add("-Dlog.file=" + home.resolve("tally.log"));
    command.add("-cp");
    command.add(
        Path.of("target", "classes").toAbsolutePath()
            + File.pathSeparator
            + Files.readString(Path.of("target", "launcher.classpath")).trim());
    command.add(TallyCommand.class.getName());
    command.add("up");
    ProcessBuilder builder =
        new ProcessBuilder(command.stream().filter(s -> !s.isEmpty()).toList());
    Map<String, String> env = builder.environment();
    env.put("TALLY_HOME", home.toString());
    env.put("TALLY_HTTP_PORT", String.valueOf(httpPort));
    env.put("TALLY_PG_PORT", String.valueOf(pgPort));
    env.put("TALLY_KAFKA_PORT", String.valueOf(kafkaPort));
    env.put("TALLY_FLINK_UI_PORT", String.valueOf(flinkUiPort));
    // Any free port for the metrics reporter: the default range may be held by whatever else runs
    // here.
    env.put("TALLY_FLINK_METRICS_PORTS", "0");
    env.put("TALLY_API_KEY", "kill-nine-key-0123456789abcdefghijklm");
    tallySettings = StackSettings.fromEnv(env);
    starts++;
    builder.redirectErrorStream(true).redirectOutput(stdoutFile().toFile());
    Process process = builder.start();
    await()
        .atMost(Duration.ofSeconds(120))
        .pollInterval(Duration.ofMillis(500))
        .until(
            () -> {
              assertThat(process.isAlive()).as("./tally up exited: %s", stdout()).isTrue();
              return stdout().contains("Tally is up.");
            });
    return process;
  }

  private Path stdoutFile() {
    return home.resolve("stdout-" + starts + ".log");
  }

  private String stdout() throws IOException {
    Path out = stdoutFile();
    return Files.exists(out) ? Files.readString(out) : "";
  }

  private String jdbcUrl() {
    return "jdbc:postgresql://localhost:" + pgPort + "/postgres";
  }
}
