package io.tally.launcher;

import io.tally.clickjob.ClickCountJob;
import io.tally.clickjob.ClickJobOptions;
import io.tally.clickjob.io.RewindToOpenDay;
import io.tally.counting.periods.Recount;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import org.apache.flink.runtime.OperatorIDPair;
import org.apache.flink.runtime.checkpoint.Checkpoints;
import org.apache.flink.runtime.checkpoint.OperatorState;
import org.apache.flink.runtime.checkpoint.metadata.CheckpointMetadata;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobgraph.JobVertex;
import org.apache.flink.runtime.jobgraph.OperatorID;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

/**
 * State in a checkpoint that no operator of the click job would take back. Every stateful uid
 * carries its state layout's version, so a checkpoint of an older layout holds such state; resuming
 * from it needs Flink's {@code ignore-unclaimed-state} (the CLI's {@code --allowNonRestoredState}),
 * which drops it. That is right once, for the upgrade (docs/operations.md, "Upgrading the click
 * job"), and wrong as a habit: it would as quietly drop state a bug renamed. So the launcher finds
 * it first and asks.
 */
final class UnclaimedState {

  private UnclaimedState() {}

  /**
   * The operators of {@code checkpoint} (a {@code chk-N} folder) that hold state and are not in
   * {@code job}.
   */
  static Set<OperatorID> in(Path checkpoint, JobGraph job) throws IOException {
    Set<OperatorID> claimed = new HashSet<>();
    for (JobVertex vertex : job.getVertices()) {
      for (OperatorIDPair ids : vertex.getOperatorIDs()) {
        claimed.add(ids.getGeneratedOperatorID());
        ids.getUserDefinedOperatorID().ifPresent(claimed::add);
      }
    }
    CheckpointMetadata metadata;
    try (InputStream in = Files.newInputStream(checkpoint.resolve("_metadata"))) {
      metadata =
          Checkpoints.loadCheckpointMetadata(
              new DataInputStream(in),
              UnclaimedState.class.getClassLoader(),
              checkpoint.toUri().toString());
    }
    Set<OperatorID> unclaimed = new HashSet<>();
    for (OperatorState state : metadata.getOperatorStates()) {
      boolean holdsState = state.getStateSize() > 0 || state.getCoordinatorState() != null;
      if (holdsState && !claimed.contains(state.getOperatorID())) {
        unclaimed.add(state.getOperatorID());
      }
    }
    return unclaimed;
  }

  /** The click job's graph as {@code options} build it, without running it. */
  static JobGraph clickJob(ClickJobOptions options) {
    StreamExecutionEnvironment env =
        StreamExecutionEnvironment.getExecutionEnvironment(ClickCountJob.configuration(options));
    // Only the operators matter here: where the source would start is for the start itself to read.
    ClickCountJob.build(env, options, new RewindToOpenDay.Start(null, Recount.NONE));
    return env.getStreamGraph().getJobGraph();
  }

  /** Refuses a resume from {@code checkpoint} that would drop state, unless the user allowed it. */
  static void check(Path checkpoint, ClickJobOptions options, boolean allowed, Path checkpoints)
      throws IOException {
    Set<OperatorID> unclaimed = in(checkpoint, clickJob(options));
    if (!unclaimed.isEmpty() && !allowed) {
      throw new IllegalStateException(
          "The newest checkpoint, "
              + checkpoint
              + ", holds the state of "
              + unclaimed.size()
              + " operators this version of the click job does not have: a version with another"
              + " state layout wrote it. Start once with --allow-non-restored-state to resume"
              + " without that state (the job then recounts the open day from Kafka;"
              + " docs/operations.md, \"Upgrading the click job\"), or move "
              + checkpoints
              + " away to start afresh.");
    }
  }
}
