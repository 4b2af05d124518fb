package io.tally.reconcile.functions;

import io.tally.counting.records.DeadLetter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import org.apache.flink.api.common.accumulators.ListAccumulator;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;

/**
 * Keeps the rows a staging table refused in the accumulator {@value #ACCUMULATOR}, one line each
 * ({@code table: reason: row}), for the run's report; reconcile writes no dead letters.
 */
public class CollectRefusedRows extends RichMapFunction<DeadLetter, String> {

  public static final String ACCUMULATOR = "refusedRows";

  private transient ListAccumulator<String> refused;

  @Override
  public void open(OpenContext openContext) {
    refused = new ListAccumulator<>();
    getRuntimeContext().addAccumulator(ACCUMULATOR, refused);
  }

  @Override
  public String map(DeadLetter letter) {
    String line =
        letter.topic()
            + ": "
            + letter.detail()
            + ": "
            + new String(letter.raw(), StandardCharsets.UTF_8);
    refused.add(line);
    return line;
  }

  /** The lines, from a finished job's accumulator value (null when nothing was refused). */
  @SuppressWarnings("unchecked")
  public static java.util.List<String> lines(Object accumulated) {
    return accumulated == null
        ? java.util.List.of()
        : new ArrayList<>((java.util.List<String>) accumulated);
  }
}
