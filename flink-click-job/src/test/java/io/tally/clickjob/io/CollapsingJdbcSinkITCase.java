package io.tally.clickjob.io;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.clickjob.ClickJobOptions;
import io.tally.counting.records.MinuteCount;
import io.tally.counting.sql.ClickCountUpsert;
import io.tally.testing.PostgresExtension;
import java.util.List;
import java.util.Map;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A collapsing upsert sink (the job's progress row's) on a real PostgreSQL whose driver rewrites
 * each batch into one multi-row upsert ({@code reWriteBatchedInserts=true}): two firings of one
 * window in one batch are written, the last one.
 */
class CollapsingJdbcSinkITCase {

  @RegisterExtension static final PostgresExtension POSTGRES = new PostgresExtension();

  @RegisterExtension
  static final MiniClusterExtension FLINK =
      new MiniClusterExtension(
          new MiniClusterResourceConfiguration.Builder().setNumberSlotsPerTaskManager(1).build());

  private static final long MINUTE = 1_795_000_020_000L; // a minute boundary

  @BeforeEach
  void setUp() {
    POSTGRES.truncateAll();
  }

  @Test
  void aWindowFiredTwiceInOneRewrittenBatchIsWrittenOnceWithItsLastTotals() throws Exception {
    String url =
        POSTGRES.jdbcUrl()
            + (POSTGRES.jdbcUrl().contains("?") ? "&" : "?")
            + "reWriteBatchedInserts=true";
    // One batch: far more rows than these fit in it, and it waits longer than the job runs.
    ClickJobOptions options =
        ClickJobOptions.parse(
            "--jdbc-url",
            url,
            "--jdbc-user",
            POSTGRES.user(),
            "--jdbc-password",
            POSTGRES.password(),
            "--sink-batch-size",
            "1000",
            "--sink-flush-interval",
            "10m");
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    env.setParallelism(1);
    env.fromData(
            new MinuteCount("abc", MINUTE, 3, 0),
            new MinuteCount("xyz", MINUTE, 1, 1),
            // The same window again, fired later with more clicks.
            new MinuteCount("abc", MINUTE, 5, 1),
            new MinuteCount("abc", MINUTE + 60_000, 2, 0))
        .sinkTo(
            new CollapsingJdbcSink<>(
                options.connection().jdbc(),
                ClickCountUpsert.SQL,
                new ClickCountUpsert(),
                MinuteCount::key,
                options.sinkBatchSize(),
                options.sinkFlushInterval().toMillis(),
                0));

    env.execute("collapsing-sink");

    assertThat(
            POSTGRES.rows(
                "SELECT code || '@' || (extract(epoch FROM minute) * 1000)::bigint, clicks,"
                    + " bot_clicks FROM click_counts"))
        .isEqualTo(
            Map.of(
                "abc@" + MINUTE, List.of(5L, 1L),
                "xyz@" + MINUTE, List.of(1L, 1L),
                "abc@" + (MINUTE + 60_000), List.of(2L, 0L)));
  }
}
