package io.tally.clickjob.functions;

import org.apache.flink.api.common.functions.FlatMapFunction;
import org.apache.flink.util.Collector;

/**
 * Lets no record through, only the watermarks that every operator forwards: what {@link
 * EventTimeProgress} needs from each counting subtask, without sending it every row they emit.
 */
public class WatermarksOnly<T> implements FlatMapFunction<T, T> {

  @Override
  public void flatMap(T value, Collector<T> out) {}
}
