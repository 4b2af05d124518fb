package io.tally.counting;

import java.io.Serializable;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/**
 * How clicks are counted into rows: the flags the streaming job and reconciliation must agree on,
 * mixed into each job's options.
 */
public final class CountingOptions implements Serializable {

  private int maxDimensionValues = 200;

  @Option(
      names = "--max-dimension-values",
      defaultValue = "200",
      description =
          "values kept per link, hour or day and dimension, those of least rank whatever"
              + " order they come in; the clicks of the others are counted under (other)")
  void maxDimensionValues(int values) {
    if (values < 1) {
      throw new CommandLine.ParameterException(
          new CommandLine(this), "--max-dimension-values must be at least 1, not " + values);
    }
    this.maxDimensionValues = values;
  }

  public int maxDimensionValues() {
    return maxDimensionValues;
  }
}
