package io.tally.launcher;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.tally.clickjob.ClickJobOptions;
import java.nio.file.Path;
import java.time.Duration;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.util.Collector;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link UnclaimedState} on a real retained checkpoint: one written by a job of another state layout
 * (stateful operators the click job does not have) is refused unless the resume is allowed to drop that
 * state, and a checkpoint is not refused by the job that wrote it.
 */
class UnclaimedStateITCase {

  @TempDir Path checkpoints;

  @Test
  void aCheckpointOfAnotherLayoutIsRefusedUnlessItsStateMayBeDropped() throws Exception {
    StreamExecutionEnvironment env = olderLayout();
    JobClient job = env.executeAsync("older-layout");
    Path checkpoint;
    try {
      await().atMost(Duration.ofSeconds(60)).until(() -> Checkpoints.latest(checkpoints).isPresent());
      checkpoint = Checkpoints.latest(checkpoints).orElseThrow();
    } finally {
      job.cancel().get();
    }
    ClickJobOptions clickJob = ClickJobOptions.parse();

    assertThat(UnclaimedState.in(checkpoint, UnclaimedState.clickJob(clickJob))).isNotEmpty();
    assertThatThrownBy(() -> UnclaimedState.check(checkpoint, clickJob, false, checkpoints))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("--allow-non-restored-state")
        .hasMessageContaining("Upgrading the click job");
    assertThatCode(() -> UnclaimedState.check(checkpoint, clickJob, true, checkpoints)).doesNotThrowAnyException();

    JobGraph sameLayout = olderLayout().getStreamGraph().getJobGraph();
    assertThat(UnclaimedState.in(checkpoint, sameLayout)).as("the job that wrote it claims all of it").isEmpty();
  }

  /** A job with one keyed operator holding state, checkpointing often and keeping its checkpoints. */
  private StreamExecutionEnvironment olderLayout() {
    Configuration conf = new Configuration();
    conf.setString("execution.checkpointing.interval", "200 ms");
    conf.setString("execution.checkpointing.dir", checkpoints.toUri().toString());
    conf.setString("execution.checkpointing.externalized-checkpoint-retention", "RETAIN_ON_CANCELLATION");
    StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(1, conf);
    env.fromSequence(0, Long.MAX_VALUE).uid("numbers")
        .keyBy(n -> n % 10)
        .process(new RememberLast()).uid("count-clicks-per-minute").name("An older layout's counting")
        .sinkTo(new DiscardingSink<>()).uid("discard");
    return env;
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
    }
  }
}
