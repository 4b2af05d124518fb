package io.tally.clickjob;

import io.tally.counting.Clicks;
import io.tally.counting.periods.ClickTally;
import io.tally.counting.periods.MinuteTotals;
import io.tally.counting.periods.Recount;
import io.tally.counting.records.AggregateRow;
import io.tally.counting.records.Click;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.transformations.OneInputTransformation;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness;

/**
 * Takes operators out of the job's real graph so harness tests exercise exactly what the job runs.
 */
public final class ClickCountJobGraphs {

  private ClickCountJobGraphs() {}

  /** A harness around the job's counting operator, configured by {@code options}. */
  public static KeyedOneInputStreamOperatorTestHarness<String, MinuteTotals, AggregateRow>
      countHarness(ClickJobOptions options, int maxParallelism, int parallelism, int subtask)
          throws Exception {
    return countHarness(options, Recount.NONE, maxParallelism, parallelism, subtask);
  }

  /**
   * A harness around the job's counting operator, configured by {@code options}, in a run that
   * started without state with {@code recount}.
   */
  @SuppressWarnings("unchecked")
  public static KeyedOneInputStreamOperatorTestHarness<String, MinuteTotals, AggregateRow>
      countHarness(
          ClickJobOptions options,
          Recount recount,
          int maxParallelism,
          int parallelism,
          int subtask)
          throws Exception {
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    MinuteTotals seed = new MinuteTotals("abc", 0, new ClickTally());
    SingleOutputStreamOperator<AggregateRow> counted =
        ClickCountJob.countPerLink(env.fromData(seed), options, recount);
    OneInputTransformation<MinuteTotals, AggregateRow> transformation =
        (OneInputTransformation<MinuteTotals, AggregateRow>) counted.getTransformation();
    OneInputStreamOperator<MinuteTotals, AggregateRow> operator =
        (OneInputStreamOperator<MinuteTotals, AggregateRow>) transformation.getOperator();
    return new KeyedOneInputStreamOperatorTestHarness<>(
        operator, MinuteTotals::code, Types.STRING, maxParallelism, parallelism, subtask);
  }

  /**
   * What a checkpoint does to the counting operator: the barrier's preparation, then the snapshot.
   */
  public static OperatorSubtaskState checkpoint(
      KeyedOneInputStreamOperatorTestHarness<String, MinuteTotals, AggregateRow> harness, long id)
      throws Exception {
    harness.prepareSnapshotPreBarrier(id);
    return harness.snapshot(id, harness.getProcessingTime());
  }

  /** A harness around the job's per-subtask pre-aggregation, configured by {@code options}. */
  @SuppressWarnings("unchecked")
  public static OneInputStreamOperatorTestHarness<Click, MinuteTotals> preAggregateHarness(
      ClickJobOptions options) throws Exception {
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    SingleOutputStreamOperator<MinuteTotals> partials =
        ClickCountJob.preAggregate(env.fromData(Clicks.click("seed", "abc", 0)), options);
    OneInputTransformation<Click, MinuteTotals> transformation =
        (OneInputTransformation<Click, MinuteTotals>) partials.getTransformation();
    return new OneInputStreamOperatorTestHarness<>(
        (OneInputStreamOperator<Click, MinuteTotals>) transformation.getOperator());
  }

  public static java.time.Duration livePartialsEvery() {
    return ClickCountJob.LIVE_PARTIALS_EVERY;
  }
}
