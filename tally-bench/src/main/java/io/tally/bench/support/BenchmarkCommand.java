package io.tally.bench.support;

import io.tally.testing.Machine;
import java.io.PrintStream;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * The frame of every {@code ./tally bench} command: its name and this machine first, then what the
 * benchmark prints, its targets and RATIO lines, and how long it all took.
 */
public abstract class BenchmarkCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  /** Runs the benchmark, printing its tables to {@code out} and its figures into {@code report}. */
  protected abstract void run(Report report, PrintStream out) throws Exception;

  @Override
  public Integer call() throws Exception {
    PrintStream out = System.out;
    Report report = new Report();
    out.println("tally bench " + spec.name() + " — " + Machine.describe());
    long start = System.nanoTime();
    run(report, out);
    report.print(out);
    out.printf(
        Locale.ROOT,
        "%ntally bench %s took %.0f s%n",
        spec.name(),
        (System.nanoTime() - start) / 1e9);
    return 0;
  }
}
