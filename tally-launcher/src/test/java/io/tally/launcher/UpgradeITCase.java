package io.tally.launcher;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.tally.embedded.EmbeddedPostgresServer;
import io.tally.embedded.Ports;
import io.tally.local.Checkpoints;
import io.tally.local.LocalReconcile;
import io.tally.reconcile.AggregateTable;
import io.tally.reconcile.ReconcileOptions;
import io.tally.reconcile.ReconcileReport;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.util.Collector;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The upgrade from an older state layout as operations.md tells it, on the local stack: the newest
 * retained checkpoint is one of a job whose stateful operators have the previous layout's uids.
 * {@code ./tally up} refuses it and names the flag; started with the flag, the job drops that
 * state, rewinds from the consumer group's committed offsets to the start of the open day and
 * counts it again whole (rows lost meanwhile come back, none doubles); a recount of the range
 * afterwards finds nothing to repair.
 */
class UpgradeITCase {

  private static final List<String> PREVIOUS_LAYOUT_UIDS =
      List.of("click-source-v7", "drop-duplicate-clicks-v7", "count-clicks-per-link-v7");

  @TempDir Path home;

  @Test
  @Timeout(value = 8, unit = TimeUnit.MINUTES)
  void anOlderLayoutIsRefusedWithoutTheFlagAndWithItTheOpenDayIsCountedAgainExactly()
      throws Exception {
    StackSettings settings = settings();
    String code;
    long earlier =
        Math.max(
            Instant.now().minus(Duration.ofMinutes(10)).toEpochMilli(),
            Instant.now().truncatedTo(ChronoUnit.DAYS).toEpochMilli());
    try (LocalStack stack = LocalStack.start(settings)) {
      code =
          new LinkClient(stack.redirectUrl(), stack.apiKey())
              .createLink("https://example.com/upgrade");
      StackProbe.sendOverEveryPartition(
          stack.kafkaBootstrap(), StackProbe.humanClicks(code, 20, earlier));
      awaitAllCounted(
          stack, code, StackProbe.botClickInEveryPartition(stack.kafkaBootstrap(), code), 20);
      // Its Kafka offsets committed past every click: all a job started without state has to go on
      // from.
      StackProbe.awaitCheckpointAfterNow(stack.flinkUiUrl());
      StackProbe.awaitCheckpointAfterNow(stack.flinkUiUrl());
    }
    Checkpoints.deleteAllJobsBut(settings.checkpoints(), Optional.empty());
    Path previous = checkpointOfThePreviousLayout(settings.checkpoints());
    assertThat(
            UnclaimedState.in(
                previous, previousLayout(settings.checkpoints()).getStreamGraph().getJobGraph()))
        .as("the job that wrote it claims all of it")
        .isEmpty();
    deleteMinuteRows(settings, code);

    assertThatThrownBy(() -> LocalStack.start(settings).close())
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("--allow-non-restored-state")
        .hasMessageContaining("Upgrading the click job");
    assertThat(Checkpoints.latest(settings.checkpoints()))
        .as("a refused start keeps the checkpoint")
        .hasValue(previous);

    try (LocalStack stack = LocalStack.start(settings, true)) {
      assertThat(stack.resumedFrom()).hasValue(previous);
      StackProbe.sendOverEveryPartition(
          stack.kafkaBootstrap(), StackProbe.humanClicksNow(code, 10));
      int markers = 2 * StackProbe.botClickInEveryPartition(stack.kafkaBootstrap(), code);
      awaitAllCounted(stack, code, markers, 30);

      ReconcileReport report =
          LocalReconcile.run(
              ReconcileOptions.parse(
                  "--from",
                  "1h",
                  "--to",
                  "now",
                  "--dry-run",
                  "--bootstrap-servers",
                  stack.kafkaBootstrap(),
                  "--jdbc-url",
                  stack.jdbcUrl(),
                  "--jdbc-user",
                  "postgres",
                  "--jdbc-password",
                  ""),
              settings.tmp());
      assertThat(report.refused()).as(report.summary()).isFalse();
      assertThat(report.minutesChecked())
          .as("the earlier clicks' minute is closed and recounted")
          .isPositive();
      assertThat(report.minutesDiffering()).as(report.summary()).isZero();
      for (AggregateTable table : AggregateTable.values()) {
        assertThat(report.aggregateRowsChanged(table))
            .as("%s: %s", table, report.summary())
            .isZero();
      }
    }
  }

  /**
   * Waits until the job has counted the bot markers written so far (one in every partition, after
   * all other clicks: once they are counted, so is everything before them), then checks the human
   * total.
   */
  private static void awaitAllCounted(LocalStack stack, String code, long markers, long humans)
      throws Exception {
    await("every click up to the markers counted")
        .atMost(Duration.ofSeconds(150))
        .pollInterval(Duration.ofSeconds(1))
        .until(() -> StackProbe.minuteTotal(stack.jdbcUrl(), code, "bot_clicks") == markers);
    assertThat(StackProbe.minuteTotal(stack.jdbcUrl(), code, "clicks"))
        .as("human clicks, each once")
        .isEqualTo(humans);
  }

  /** As if rows had been lost since the stop: only a recount of the open day brings them back. */
  private static void deleteMinuteRows(StackSettings settings, String code) throws Exception {
    try (EmbeddedPostgresServer pg =
            EmbeddedPostgresServer.start(
                settings.pgData(), Ports.ephemeral(), EmbeddedPostgresServer.Durability.FAST);
        Connection c = DriverManager.getConnection(pg.jdbcUrl(), "postgres", "");
        PreparedStatement delete = c.prepareStatement("DELETE FROM click_counts WHERE code = ?")) {
      delete.setString(1, code);
      assertThat(delete.executeUpdate()).isPositive();
    }
  }

  /**
   * Runs a job of the previous layout on {@code checkpoints} until it retains a checkpoint, and
   * returns it.
   */
  private static Path checkpointOfThePreviousLayout(Path checkpoints) throws Exception {
    JobClient job = previousLayout(checkpoints).executeAsync("previous-layout");
    try {
      await()
          .atMost(Duration.ofSeconds(60))
          .until(() -> Checkpoints.latest(checkpoints).isPresent());
      return Checkpoints.latest(checkpoints).orElseThrow();
    } finally {
      job.cancel().get();
    }
  }

  /**
   * A job with the previous layout's stateful uids, checkpointing often and keeping its
   * checkpoints.
   */
  private static StreamExecutionEnvironment previousLayout(Path checkpoints) {
    Configuration conf = new Configuration();
    conf.setString("execution.checkpointing.interval", "200 ms");
    conf.setString("execution.checkpointing.dir", checkpoints.toUri().toString());
    conf.setString(
        "execution.checkpointing.externalized-checkpoint-retention", "RETAIN_ON_CANCELLATION");
    StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(1, conf);
    env.fromSequence(0, Long.MAX_VALUE)
        .uid(PREVIOUS_LAYOUT_UIDS.get(0))
        .keyBy(n -> n % 10)
        .process(new RememberLast())
        .uid(PREVIOUS_LAYOUT_UIDS.get(1))
        .keyBy(n -> n % 7)
        .process(new RememberLast())
        .uid(PREVIOUS_LAYOUT_UIDS.get(2))
        .sinkTo(new DiscardingSink<>())
        .uid("discard");
    return env;
  }

  private StackSettings settings() {
    return new StackSettings(
        home,
        0,
        0,
        0,
        0,
        PortRange.ANY,
        Optional.empty(),
        "postgres",
        "",
        Optional.of("upgrade-key-0123456789abcdefghijklmnop"));
  }

  /** Keeps the last number of each key. */
  private static final class RememberLast extends KeyedProcessFunction<Long, Long, Long> {
    private transient ValueState<Long> last;

    @Override
    public void open(OpenContext openContext) {
      last = getRuntimeContext().getState(new ValueStateDescriptor<>("last", Types.LONG));
    }

    @Override
    public void processElement(Long n, Context ctx, Collector<Long> out) throws Exception {
      last.update(n);
      out.collect(n);
    }
  }
}
