package io.tally.clickjob;

import io.tally.clickjob.records.Click;
import io.tally.clickjob.records.MinuteTotals;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.transformations.OneInputTransformation;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.util.OutputTag;

/** Takes operators out of the job's real graph so harness tests exercise exactly what the job runs. */
public final class ClickCountJobGraphs {

  private ClickCountJobGraphs() {}

  /** A harness around the job's window operator, configured by {@code options}. */
  @SuppressWarnings("unchecked")
  public static KeyedOneInputStreamOperatorTestHarness<String, Click, MinuteTotals> windowHarness(ClickJobOptions options)
      throws Exception {
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    SingleOutputStreamOperator<MinuteTotals> counted =
        ClickCountJob.countPerMinute(env.fromData(Clicks.click("seed", "abc", 0)).keyBy(Click::code), options);
    OneInputTransformation<Click, MinuteTotals> transformation =
        (OneInputTransformation<Click, MinuteTotals>) counted.getTransformation();
    OneInputStreamOperator<Click, MinuteTotals> operator =
        (OneInputStreamOperator<Click, MinuteTotals>) transformation.getOperator();
    return new KeyedOneInputStreamOperatorTestHarness<>(operator, Click::code, Types.STRING);
  }

  public static OutputTag<Click> lateClicks() {
    return ClickCountJob.LATE_CLICKS;
  }
}
