package io.tally.counting;

import java.io.Serializable;
import picocli.CommandLine.Option;

/**
 * How clicks are counted into rows: the flags the streaming job and reconciliation must agree on,
 * mixed into each job's options.
 */
public final class CountingOptions implements Serializable {

  @Option(
      names = "--max-dimension-values",
      description =
          "values kept per link, hour and dimension; the clicks of"
              + " the values that come after are counted under (other)")
  int maxDimensionValues = 200;

  public int maxDimensionValues() {
    return maxDimensionValues;
  }
}
