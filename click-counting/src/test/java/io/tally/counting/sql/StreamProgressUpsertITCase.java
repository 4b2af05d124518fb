package io.tally.counting.sql;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.counting.records.StreamProgress;
import io.tally.testing.PostgresExtension;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The job's progress upsert ({@link AggregateUpserts#PROGRESS_SQL}) on a real PostgreSQL. */
class StreamProgressUpsertITCase {

  @RegisterExtension static final PostgresExtension POSTGRES = new PostgresExtension();

  private static final long MINUTE = 60_000L;
  private static final Duration LATENESS = Duration.ofMinutes(7);
  private static final long NOW = 1_795_000_020_000L; // a minute boundary

  @BeforeEach
  void setUp() {
    POSTGRES.truncateAll();
  }

  @Test
  void withinARunTheProgressOnlyMovesForward() throws Exception {
    write(new StreamProgress(NOW, 1));
    write(new StreamProgress(NOW + MINUTE, 1));
    write(new StreamProgress(NOW, 1)); // a write sent again after a restore from a checkpoint

    assertThat(closedBefore()).isEqualTo(NOW + MINUTE);
    try (Connection c = POSTGRES.connect();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT allowed_lateness_ms FROM stream_progress")) {
      rs.next();
      assertThat(rs.getLong(1)).as("the lateness the job runs with").isEqualTo(7 * MINUTE);
    }
  }

  @Test
  void aRunStartedWithoutStateMovesItBackToWhereItsRecountHasGot() throws Exception {
    write(new StreamProgress(NOW, 0)); // a run from before runs were told apart
    write(new StreamProgress(NOW - 600 * MINUTE, 5)); // the rewound run's first minute

    assertThat(closedBefore()).isEqualTo(NOW - 600 * MINUTE);

    write(new StreamProgress(NOW, 1)); // the earlier run, late
    assertThat(closedBefore())
        .as("an earlier run's write, sent late, changes nothing")
        .isEqualTo(NOW - 600 * MINUTE);
  }

  private static void write(StreamProgress progress) throws Exception {
    try (Connection c = POSTGRES.connect();
        PreparedStatement ps = c.prepareStatement(AggregateUpserts.PROGRESS_SQL)) {
      AggregateUpserts.progress(AggregateUpserts.STREAMING_JOB, LATENESS).accept(ps, progress);
      ps.executeUpdate();
    }
  }

  private static long closedBefore() throws Exception {
    try (Connection c = POSTGRES.connect();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT closed_before FROM stream_progress")) {
      assertThat(rs.next()).isTrue();
      long closedBefore = rs.getTimestamp(1).getTime();
      assertThat(rs.next()).as("one row per job").isFalse();
      return closedBefore;
    }
  }
}
