package io.tally.bench.uniques;

/**
 * Relative errors of several trials: the signed mean shows a bias, the RMS the spread the theory
 * predicts, and the worst is what a target is judged on.
 */
public final class ErrorSummary {

  private int count;
  private double sum;
  private double sumOfSquares;
  private double worst;

  public void add(double relativeError) {
    count++;
    sum += relativeError;
    sumOfSquares += relativeError * relativeError;
    if (Math.abs(relativeError) > Math.abs(worst)) {
      worst = relativeError;
    }
  }

  public int count() {
    return count;
  }

  public double mean() {
    return count == 0 ? Double.NaN : sum / count;
  }

  public double rms() {
    return count == 0 ? Double.NaN : Math.sqrt(sumOfSquares / count);
  }

  /** The error of largest magnitude, with its sign. */
  public double worst() {
    return count == 0 ? Double.NaN : worst;
  }
}
