package io.tally.bench.pipeline;

import static io.tally.testing.Table.fmt;

import io.tally.bench.support.Report;
import io.tally.bench.support.Sql;
import io.tally.local.ClickJobProcess;
import io.tally.local.LocalServices;
import io.tally.testing.Table;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * {@code bench pipeline --against REF}: this build's click job and another version's, each in a
 * child JVM of its own, read the same preloaded topic in turns, A B B A, and the ratio of their
 * sustained rates is printed. This machine's speed swings by up to 2× between minutes, so only runs
 * side by side and alternated tell a change from the weather.
 */
final class AgainstBenchmark {

  private static final int ROUNDS = 2;

  private final LocalServices stack;
  private final PipelineBenchmark backlog;
  private final PrintStream out;
  private final Report report;

  AgainstBenchmark(LocalServices stack, PipelineBenchmark backlog, PrintStream out, Report report) {
    this.stack = stack;
    this.backlog = backlog;
    this.out = out;
    this.report = report;
  }

  void run(String ref) throws Exception {
    String theirs = OtherVersion.classPath(ref, out);
    String ours = System.getProperty("java.class.path");
    Table t =
        new Table(
            "This build's click job against " + ref + " on one topic, alternately",
            "run",
            "version",
            "sustained events/s",
            "÷ decoding consumer");
    double thisMean = 0;
    double refMean = 0;
    for (int run = 0; run < 2 * ROUNDS; run++) {
      boolean mine = isThisBuild(run);
      String version = mine ? "this" : ref;
      double rate = sustainedRate(run, mine ? ours : theirs);
      out.printf("run %d (%s): %s events/s%n", run + 1, version, fmt(rate, 0));
      t.row(run + 1, version, fmt(rate, 0), fmt(rate / backlog.rawDecodeRate(), 3));
      if (mine) {
        thisMean += rate / ROUNDS;
      } else {
        refMean += rate / ROUNDS;
      }
    }
    t.note(
        "Each run a fresh consumer group from the topic's start, parallelism "
            + backlog.settings().parallelism()
            + ", in a child JVM of 1 GiB heap; sustained = from 10% to 90% of the topic, read at"
            + " the dedup vertex. Mean this/"
            + ref
            + " = "
            + fmt(thisMean / refMean, 3)
            + ".");
    t.print(out);
    report.ratio("pipeline.this/against", "throughput", thisMean / refMean);
    report.ratio("pipeline/decoding_consumer", "throughput", thisMean / backlog.rawDecodeRate());
  }

  /**
   * A B B A: each version runs once first and once last, so that neither gains from the machine
   * warming up or loses to it filling up.
   */
  private static boolean isThisBuild(int run) {
    return run % 4 == 0 || run % 4 == 3;
  }

  /** One run of the job on {@code classPath} over the whole topic; its sustained rate. */
  private double sustainedRate(int run, String classPath) throws Exception {
    Sql.emptyCountTables(stack);
    Path work = stack.dir().resolve("against-run-" + (run + 1));
    List<String> args =
        List.of(
            "--bootstrap-servers", stack.bootstrapServers(),
            "--topic", PipelineBenchmark.TOPIC,
            "--dlq-topic", PipelineBenchmark.DLQ_TOPIC,
            "--group-id", "bench-against-" + (run + 1),
            "--jdbc-url", stack.jdbcUrl(),
            "--jdbc-user", stack.dbUser(),
            "--jdbc-password", stack.dbPassword(),
            "--parallelism", String.valueOf(backlog.settings().parallelism()),
            "--idle-timeout", backlog.settings().idleTimeout().toMillis() + "ms");
    long events = backlog.truth().events();
    try (ClickJobProcess job = new ClickJobProcess(work, args, classPath)) {
      job.start(Optional.empty());
      DedupInput input = DedupInput.of(job.rest(), job.jobId());
      input.awaitRecords(events, in -> {});
      return input.rate(events / 10, events * 9 / 10);
    }
  }
}
