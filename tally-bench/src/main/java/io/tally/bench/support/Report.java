package io.tally.bench.support;

import io.tally.testing.Table;
import java.io.PrintStream;
import java.math.BigDecimal;
import java.math.MathContext;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * What a benchmark run found beyond its tables: the ratios, printed at the very end as one {@code
 * RATIO <what> <metric> <value>} line each, and each issue target with its measured value.
 *
 * <p>A value is printed with three decimals below 1,000 ({@code 0.412}), as a whole number from
 * 1,000 on ({@code 104231}, an events-per-second figure), and with three significant digits when it
 * is nonzero but under 0.001 ({@code 0.000123}), so no figure prints as 0.000 or carries decimals
 * nobody can use. Names hold no spaces: a line is split on spaces.
 */
public final class Report {

  private record Ratio(String what, String metric, double value) {}

  private record Target(String name, String measured, boolean met, String note) {}

  private final List<Ratio> ratios = new ArrayList<>();
  private final List<Target> targets = new ArrayList<>();

  /** One {@code RATIO} line; despite the name, also for a plain figure (metric {@code value}). */
  public void ratio(String what, String metric, double value) {
    if (what.isBlank() || metric.isBlank() || what.contains(" ") || metric.contains(" ")) {
      throw new IllegalArgumentException(
          "a RATIO line's names must be single words: '" + what + "' '" + metric + "'");
    }
    ratios.add(new Ratio(what, metric, value));
  }

  public void target(String name, String measured, boolean met, String note) {
    targets.add(new Target(name, measured, met, note));
  }

  /** The targets table, then one RATIO line per ratio. */
  public void print(PrintStream out) {
    if (!targets.isEmpty()) {
      Table table = new Table("Targets", "target", "measured", "result", "note");
      for (Target t : targets) {
        table.row(t.name(), t.measured(), t.met() ? "met" : "MISSED", t.note());
      }
      table.print(out);
    }
    out.println();
    for (Ratio r : ratios) {
      out.println("RATIO " + r.what() + " " + r.metric() + " " + format(r.value()));
    }
    out.flush();
  }

  /** A value as a RATIO line prints it. */
  static String format(double value) {
    if (Double.isNaN(value) || Double.isInfinite(value)) {
      return String.valueOf(value);
    }
    double magnitude = Math.abs(value);
    if (magnitude >= 1000) {
      return String.format(Locale.ROOT, "%.0f", value);
    }
    if (magnitude >= 0.001 || value == 0) {
      return String.format(Locale.ROOT, "%.3f", value);
    }
    return new BigDecimal(value).round(new MathContext(3)).stripTrailingZeros().toPlainString();
  }
}
