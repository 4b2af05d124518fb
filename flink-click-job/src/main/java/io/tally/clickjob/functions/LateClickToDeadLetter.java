package io.tally.clickjob.functions;

import io.tally.counting.records.Click;
import io.tally.counting.records.DeadLetter;
import java.nio.charset.StandardCharsets;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.metrics.Counter;

/**
 * Records a click that arrived after its minute closed for good ({@link
 * io.tally.counting.functions.DropDuplicatesByMinute} judged it). It is not counted by the stream;
 * reconciliation recovers it from the raw log, and the dead letter says which click it was.
 */
public class LateClickToDeadLetter extends RichMapFunction<Click, DeadLetter> {

  private final String topic;
  private transient Counter late;

  public LateClickToDeadLetter(String topic) {
    this.topic = topic;
  }

  @Override
  public void open(OpenContext openContext) {
    late = getRuntimeContext().getMetricGroup().counter("lateClicks");
  }

  @Override
  public DeadLetter map(Click click) {
    late.inc();
    String identity =
        "{\"click_id\":\""
            + click.clickId()
            + "\",\"code\":\""
            + click.code()
            + "\",\"ts\":"
            + click.ts()
            + ",\"bot\":"
            + click.bot()
            + "}";
    return new DeadLetter(
        DeadLetter.LATE,
        "arrived after its minute closed (the minute's end + allowed lateness); a reconciliation"
            + " over its time range counts it",
        topic,
        -1,
        -1,
        identity.getBytes(StandardCharsets.UTF_8));
  }
}
