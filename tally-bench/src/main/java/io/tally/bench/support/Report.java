package io.tally.bench.support;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * What a benchmark run found beyond its tables: the ratios, printed at the very end as one
 * {@code RATIO <what> <metric> <value>} line each, and each issue target with its measured value.
 */
public final class Report {

  private record Ratio(String what, String metric, double value) {}

  private record Target(String name, String measured, boolean met, String note) {}

  private final List<Ratio> ratios = new ArrayList<>();
  private final List<Target> targets = new ArrayList<>();

  public void ratio(String what, String metric, double value) {
    ratios.add(new Ratio(what, metric, value));
  }

  public void target(String name, String measured, boolean met, String note) {
    targets.add(new Target(name, measured, met, note));
  }

  /** The targets table, then one RATIO line per ratio. */
  public void print(PrintStream out) {
    if (!targets.isEmpty()) {
      Table table = new Table("Targets (issue 6)", "target", "measured", "result", "note");
      for (Target t : targets) {
        table.row(t.name(), t.measured(), t.met() ? "met" : "MISSED", t.note());
      }
      table.print(out);
    }
    out.println();
    for (Ratio r : ratios) {
      out.printf(Locale.ROOT, "RATIO %s %s %.3f%n", r.what(), r.metric(), r.value());
    }
    out.flush();
  }
}
