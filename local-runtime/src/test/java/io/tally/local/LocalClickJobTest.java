package io.tally.local;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.clickjob.ClickJobOptions;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Tests for {@link LocalClickJob}'s MiniCluster configuration. */
class LocalClickJobTest {

  @TempDir Path tmp;

  private static ClickJobOptions options(String parallelism) {
    return ClickJobOptions.parse(
        "--bootstrap-servers", "localhost:9092",
        "--jdbc-url", "jdbc:postgresql://localhost/tally",
        "--checkpoint-dir", "file:///tmp/checkpoints",
        "--parallelism", parallelism);
  }

  @Test
  void everyToolGetsTheJobsSettingsAndTheSameMiniCluster() {
    Configuration conf =
        LocalClickJob.configuration(options("2"), LocalClickJob.Setup.of(18081, tmp));

    assertThat(conf.get(RestOptions.PORT)).isEqualTo(18081);
    assertThat(conf.toMap())
        .containsEntry("rest.bind-address", "localhost")
        .containsEntry("web.submit.enable", "false")
        .containsEntry("taskmanager.numberOfTaskSlots", "2")
        .containsEntry("taskmanager.memory.managed.size", LocalClickJob.MANAGED_MEMORY)
        .containsEntry("io.tmp.dirs", tmp.toString())
        .containsEntry("state.backend.type", "rocksdb")
        .containsEntry("execution.checkpointing.dir", "file:///tmp/checkpoints")
        .doesNotContainKey("execution.state-recovery.path")
        .doesNotContainKey("execution.state-recovery.ignore-unclaimed-state");
  }

  @Test
  void aRestoreNamesItsCheckpointAndMayDropStateNoOperatorClaims() {
    Path checkpoint = tmp.resolve("job").resolve("chk-7");
    Configuration conf =
        LocalClickJob.configuration(
            options("2"),
            LocalClickJob.Setup.of(18081, tmp).restoringFrom(Optional.of(checkpoint), true));

    assertThat(conf.toMap())
        .containsEntry("execution.state-recovery.path", checkpoint.toUri().toString())
        .containsEntry("execution.state-recovery.ignore-unclaimed-state", "true");
  }

  @Test
  void aToolsOwnSettingsComeLastAndWin() {
    Configuration conf =
        LocalClickJob.configuration(
            options("1"),
            LocalClickJob.Setup.of(18081, tmp)
                .withFlinkConf(Map.of("taskmanager.memory.managed.size", "128m"))
                .withFlinkConf(Map.of("metrics.reporter.prom.port", "9250-9260")));

    assertThat(conf.toMap())
        .containsEntry("taskmanager.numberOfTaskSlots", "1")
        .containsEntry("taskmanager.memory.managed.size", "128m")
        .containsEntry("metrics.reporter.prom.port", "9250-9260");
  }

  @Test
  void withoutAParallelismTheMiniClusterHasASlotPerCore() {
    ClickJobOptions noParallelism =
        ClickJobOptions.parse(
            "--bootstrap-servers", "localhost:9092", "--jdbc-url", "jdbc:postgresql://localhost/t");
    Configuration conf =
        LocalClickJob.configuration(noParallelism, LocalClickJob.Setup.of(18081, tmp));

    assertThat(conf.toMap())
        .containsEntry(
            "taskmanager.numberOfTaskSlots",
            String.valueOf(Runtime.getRuntime().availableProcessors()));
  }
}
