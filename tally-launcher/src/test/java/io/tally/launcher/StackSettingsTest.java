package io.tally.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Tests for {@link StackSettings}, and how a command in another shell finds the settings of the
 * running {@code ./tally up}.
 */
class StackSettingsTest {

  @TempDir Path dir;

  @Test
  void aCommandBesideTheStackTakesTheRunningStacksSettingsWithNothingExported() throws IOException {
    StackSettings started =
        StackSettings.fromEnv(
            Map.of(
                "TALLY_HOME", dir.resolve("elsewhere").toString(),
                "TALLY_HTTP_PORT", "18080",
                "TALLY_FLINK_UI_PORT", "18081",
                "TALLY_KAFKA_PORT", "19092",
                "TALLY_PG_PORT", "15432",
                "TALLY_FLINK_METRICS_PORTS", "19250-19251"));
    Path running = dir.resolve("running.env");
    started.leaveIn(running);

    StackSettings beside = StackSettings.beside(Map.of(), running);

    assertThat(beside).isEqualTo(started);
    started.takeBackFrom(running);
    assertThat(running).doesNotExist();
  }

  @Test
  void aStackThatStopsLeavesTheSettingsOfAStackStartedSinceInPlace() throws IOException {
    Path running = dir.resolve("running.env");
    StackSettings first = StackSettings.fromEnv(Map.of("TALLY_KAFKA_PORT", "19092"));
    StackSettings second = StackSettings.fromEnv(Map.of("TALLY_KAFKA_PORT", "29092"));
    first.leaveIn(running);
    second.leaveIn(running);

    first.takeBackFrom(running);

    assertThat(StackSettings.beside(Map.of(), running).kafkaPort()).isEqualTo(29092);
  }

  @Test
  void noPasswordIsLeftForOtherShells() {
    assertThat(StackSettings.fromEnv(Map.of("TALLY_PG_PASSWORD", "secret")).asVariables())
        .isNotEmpty()
        .noneMatch(line -> line.contains("secret"));
  }

  @Test
  void whatThisShellExportsWinsOverTheRunningStacks() throws IOException {
    Path running = dir.resolve("running.env");
    StackSettings.fromEnv(Map.of("TALLY_KAFKA_PORT", "19092", "TALLY_PG_PORT", "15432"))
        .leaveIn(running);

    StackSettings beside = StackSettings.beside(Map.of("TALLY_KAFKA_PORT", "29092"), running);

    assertThat(beside.kafkaPort()).isEqualTo(29092);
    assertThat(beside.pgPort()).isEqualTo(15432);
  }

  @Test
  void withNoStackRunningTheDefaultsHold() {
    StackSettings beside = StackSettings.beside(Map.of(), dir.resolve("running.env"));

    assertThat(beside).isEqualTo(StackSettings.fromEnv(Map.of()));
  }
}
