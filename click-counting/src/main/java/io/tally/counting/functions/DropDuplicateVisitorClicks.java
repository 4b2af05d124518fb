package io.tally.counting.functions;

import io.tally.counting.records.Click;
import io.tally.counting.records.VisitorClick;
import io.tally.counting.records.VisitorDay;
import java.time.Duration;
import java.util.UUID;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.streaming.api.operators.TwoInputStreamOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;

/**
 * The dedup of people's clicks on their way to the visitor marks: {@link DropDuplicatesByMinute}'s
 * rules, keyed by the click's {@link VisitorClick}, which places it by its visitor day. Its output
 * is partitioned as {@link MarkNewVisitors#KEY} partitions, so the marks follow chained, with no
 * shuffle between.
 *
 * <p>The first input is the clicks {@link RouteToDedup} sends here, deduped and judged late or on
 * time. The second is people's clicks that the dedup by click id already let through (made before
 * this path existed on the job's state, or with an id that is not version 7): they are passed on
 * untouched, only to reach the marks.
 */
public final class DropDuplicateVisitorClicks extends DropDuplicatesByMinute<VisitorClick>
    implements TwoInputStreamOperator<Click, Click, Click> {

  /** The key: a click's visitor day and its id. */
  public static final KeySelector<Click, VisitorClick> KEY =
      click -> new VisitorClick(MarkNewVisitors.KEY.getKey(click), click.clickId());

  /**
   * @param forgetAfter how long of the job's running time an id is remembered
   * @param allowedLateness how long after its minute's end a click still counts
   */
  public DropDuplicateVisitorClicks(Duration forgetAfter, Duration allowedLateness) {
    super(
        forgetAfter,
        allowedLateness,
        number -> new VisitorClick(new VisitorDay("", 0, number, 0), new UUID(0, 0)),
        false);
  }

  @Override
  public void processElement1(StreamRecord<Click> element) throws Exception {
    processElement(element);
  }

  @Override
  public void processElement2(StreamRecord<Click> element) {
    output.collect(element);
  }
}
