package io.tally.launcher;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tally.embedded.Ports;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code ./tally up} killed with {@code kill -9} while clicks sit in an open window, then started again:
 * the job resumes from its latest retained checkpoint (window contents, dedup set and offsets together),
 * so no click is lost and none is counted twice.
 */
class KillNineITCase {

  private final int httpPort = Ports.ephemeral();
  private final int pgPort = Ports.ephemeral();
  private Process tally;
  private int starts;

  @TempDir Path home;

  @AfterEach
  void tearDown() throws Exception {
    if (tally != null) {
      tally.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
    }
  }

  @Test
  void killedWithOpenWindowsItResumesWithoutLosingOrDoublingAClick() throws Exception {
    tally = startTally();
    LinkClient client = new LinkClient("http://localhost:" + httpPort, "kill-nine-key");
    String code = client.createLink("https://example.com/kill-nine");
    long clickedAt = System.currentTimeMillis();
    client.follow(code, 5);
    awaitCheckpointAfter(clickedAt);

    tally.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
    assertThat(tally.exitValue()).as("killed, not stopped").isEqualTo(137);

    tally = startTally();
    client.follow(code, 2);
    await().atMost(Duration.ofSeconds(180)).pollInterval(Duration.ofSeconds(2)).until(() -> total(code) == 7);
    Thread.sleep(5000);
    assertThat(total(code)).isEqualTo(7);
  }

  private Process startTally() throws IOException {
    List<String> command = new ArrayList<>();
    command.add(ProcessHandle.current().info().command().orElse("java"));
    command.addAll(List.of(System.getProperty("flink.jvm.opens", "").trim().split("\\s+")));
    command.add("-Xmx1g");
    command.add("-Djava.io.tmpdir=" + Files.createDirectories(home.resolve("tmp")));
    command.add("-Dlog.file=" + home.resolve("tally.log"));
    command.add("-cp");
    command.add(Path.of("target", "classes").toAbsolutePath() + File.pathSeparator
        + Files.readString(Path.of("target", "launcher.classpath")).trim());
    command.add(TallyCommand.class.getName());
    command.add("up");
    ProcessBuilder builder = new ProcessBuilder(command.stream().filter(s -> !s.isEmpty()).toList());
    Map<String, String> env = builder.environment();
    env.put("TALLY_HOME", home.toString());
    env.put("TALLY_HTTP_PORT", String.valueOf(httpPort));
    env.put("TALLY_PG_PORT", String.valueOf(pgPort));
    env.put("TALLY_KAFKA_PORT", "0");
    env.put("TALLY_FLINK_UI_PORT", "0");
    env.put("TALLY_API_KEY", "kill-nine-key");
    starts++;
    builder.redirectErrorStream(true).redirectOutput(stdoutFile().toFile());
    Process process = builder.start();
    await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(500)).until(() -> {
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

  private void awaitCheckpointAfter(long instant) {
    await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500)).until(() -> {
      try (Stream<Path> files = Files.walk(home.resolve("checkpoints"))) {
        return files.filter(p -> p.getFileName().toString().equals("_metadata"))
            .anyMatch(p -> p.toFile().lastModified() > instant + 2000);
      }
    });
  }

  private long total(String code) throws Exception {
    try (Connection c = DriverManager.getConnection("jdbc:postgresql://localhost:" + pgPort + "/postgres", "postgres", "");
        PreparedStatement ps = c.prepareStatement("SELECT COALESCE(sum(clicks), 0) FROM click_counts WHERE code = ?")) {
      ps.setString(1, code);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }
}
