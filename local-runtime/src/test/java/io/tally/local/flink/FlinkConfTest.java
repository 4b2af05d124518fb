package io.tally.local.flink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.Map;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.GlobalConfiguration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Tests for {@link FlinkConf}: the shipped config.yaml as Flink itself reads it once rendered. */
class FlinkConfTest {

  @TempDir Path dir;

  @Test
  void theRenderedConfigPutsStateUnderTheHomeAndTheRestApiOnTheGivenPort() {
    Path home = dir.resolve("home");
    Configuration conf =
        GlobalConfiguration.loadConfiguration(
            FlinkConf.writeCluster(dir.resolve("conf"), home, 18081, Map.of()).toString());

    assertThat(conf.getString("rest.port", null)).isEqualTo("18081");
    assertThat(conf.getString("rest.bind-address", null)).isEqualTo("localhost");
    assertThat(conf.getString("web.submit.enable", null)).isEqualTo("false");
    assertThat(conf.getString("state.backend.type", null)).isEqualTo("rocksdb");
    assertThat(conf.getString("execution.checkpointing.incremental", null)).isEqualTo("true");
    assertThat(conf.getString("execution.checkpointing.dir", null))
        .isEqualTo("file://" + home + "/checkpoints");
    assertThat(conf.getString("execution.checkpointing.savepoint-dir", null))
        .isEqualTo("file://" + home + "/savepoints");
    assertThat(conf.getString("execution.checkpointing.externalized-checkpoint-retention", null))
        .isEqualTo("RETAIN_ON_CANCELLATION");
    assertThat(conf.getString("taskmanager.numberOfTaskSlots", null)).isEqualTo("2");
    assertThat(conf.getString("metrics.reporter.prom.factory.class", null))
        .isEqualTo("org.apache.flink.metrics.prometheus.PrometheusReporterFactory");
    assertThat(conf.getString("metrics.reporter.prom.port", null)).isEqualTo("9250-9260");
  }

  @Test
  void overridesReplaceTheShippedLineOrAreAdded() {
    // Flink refuses a key given twice, so an override must replace the shipped line, not follow it.
    Configuration conf =
        GlobalConfiguration.loadConfiguration(
            FlinkConf.writeCluster(
                    dir.resolve("conf"),
                    dir,
                    8081,
                    FlinkConf.parseProperties(
                        "metrics.reporter.prom.port: 9300-9310\n"
                            + "# a comment\n"
                            + "heartbeat.timeout: 20 s\n"))
                .toString());

    assertThat(conf.getString("metrics.reporter.prom.port", null)).isEqualTo("9300-9310");
    assertThat(conf.getString("heartbeat.timeout", null)).isEqualTo("20 s");
  }

  @Test
  void aPropertyLineWithoutKeyAndValueIsRefused() {
    assertThatThrownBy(() -> FlinkConf.parseProperties("rest.port=9999"))
        .hasMessage("TALLY_FLINK_PROPERTIES takes 'key: value' lines, not 'rest.port=9999'");
  }
}
