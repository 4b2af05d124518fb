package io.tally.bench.pipeline;

import io.tally.bench.support.CpuMeter;
import io.tally.bench.support.Report;
import io.tally.local.LocalServices;
import java.io.PrintStream;

/**
 * What a job run on the preloaded topic works with: the stack, the backlog and its ceiling, the
 * report.
 */
abstract class BacklogBenchmark {

  final LocalServices stack;
  final PipelineBenchmark.Settings settings;
  final PipelineBenchmark backlog;
  final PrintStream out;
  final Report report;
  final CpuMeter cpu;

  BacklogBenchmark(LocalServices stack, PipelineBenchmark backlog, PrintStream out, Report report) {
    this.stack = stack;
    this.settings = backlog.settings();
    this.backlog = backlog;
    this.out = out;
    this.report = report;
    this.cpu = new CpuMeter(stack.postmasterPid());
  }
}
