package io.tally.bench.uniques;

import static io.tally.testing.Table.count;
import static io.tally.testing.Table.fmt;

import io.tally.bench.support.BenchmarkCommand;
import io.tally.bench.support.Columns;
import io.tally.bench.support.Report;
import io.tally.event.VisitorSketches;
import io.tally.testing.Table;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.datasketches.cpc.CpcSketch;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Option;

/**
 * {@code bench uniques}: how far the range uniques of {@link VisitorSketches} are from the truth,
 * what a day's stored sketch costs in bytes, and what the stats API's union of a range costs. It
 * runs the real sketch code in memory; no stack is started.
 */
@Command(
    name = "uniques",
    description =
        "Error of range unique visitors (union of day sketches) against exact sets, stored sketch"
            + " bytes against visitors, and the time of a 90-day union (in memory; no stack).")
public final class UniquesBenchmark extends BenchmarkCommand {

  /** The goal: the range uniques of 100,000 visitors over 30 days within 2%. */
  static final int TARGET_VISITORS = 100_000;

  static final double TARGET_ERROR = 0.02;

  /** Visitors a day for the bytes table: one link-day from a single visitor to a viral day. */
  private static final int[] DAY_SIZES = {1, 10, 100, 1_000, 10_000, 100_000, 1_000_000};

  private static final int BYTES_SEEDS = 5;

  @Option(
      names = "--visitors",
      split = ",",
      description = "distinct visitors over the range, one error table row per size and pattern",
      defaultValue = "10k,100k,1M",
      converter = CountConverter.class)
  List<Integer> visitors;

  @Option(names = "--trials", description = "trials per size and pattern", defaultValue = "20")
  int trials;

  @Option(names = "--days", description = "days in the measured range", defaultValue = "30")
  int days;

  @Option(
      names = "--union-days",
      description = "days in the timed union of stored sketches",
      defaultValue = "90")
  int unionDays;

  @Option(
      names = "--dense-visitors",
      description = "visitors on each day of the timed union",
      defaultValue = "100k",
      converter = CountConverter.class)
  int denseVisitors;

  @Option(
      names = "--repetitions",
      description = "timed unions of each range (after as many untimed ones)",
      defaultValue = "200")
  int repetitions;

  @Option(
      names = "--threads",
      description = "trials run in parallel (the results do not depend on it)",
      defaultValue = "2")
  int threads;

  @Option(
      names = "--seed",
      description = "seed of every trial's visitors",
      defaultValue = "20261129")
  long seed;

  @Override
  protected void run(Report report, PrintStream out) throws Exception {
    if (trials < 1 || days < 1 || unionDays < 1 || repetitions < 1) {
      throw new IllegalArgumentException(
          "--trials, --days, --union-days and --repetitions must be at least 1");
    }
    accuracy(report, out);
    bytes(report, out);
    unionTime(report, out);
  }

  /** The errors of one size and return pattern's trials: of the sketches, and of summing days. */
  private record Accuracy(
      int visitors, ReturnPattern pattern, ErrorSummary sketch, ErrorSummary sum) {}

  private static final Columns<Accuracy> ACCURACY =
      new Columns<Accuracy>()
          .and("visitors", a -> count(a.visitors()))
          .and("return pattern", a -> a.pattern().label())
          .and("visitor-days per visitor", a -> fmt(1 + a.sum().mean(), 2))
          .and("sketch mean", a -> pct(a.sketch().mean()))
          .and("sketch RMS", a -> pctOf(a.sketch().rms()))
          .and("sketch worst", a -> pct(a.sketch().worst()))
          .and("sum of days mean", a -> pct(a.sum().mean()))
          .and("sum of days worst", a -> pct(a.sum().worst()));

  private void accuracy(Report report, PrintStream out) throws Exception {
    List<Accuracy> rows = new ArrayList<>();
    ExecutorService pool = Executors.newFixedThreadPool(Math.max(1, threads));
    try {
      for (int size : visitors) {
        for (ReturnPattern pattern : ReturnPattern.values()) {
          Accuracy row = trials(pool, size, pattern);
          rows.add(row);
          String name = "uniques." + size + "." + pattern.name().toLowerCase(Locale.ROOT);
          report.ratio(name, "worst_abs_error", Math.abs(row.sketch().worst()));
          report.ratio(name, "rms_error", row.sketch().rms());
        }
      }
    } finally {
      pool.shutdownNow();
    }
    ACCURACY
        .table(
            String.format(
                Locale.ROOT,
                "Range uniques over %d days against the exact count, %d trials each"
                    + " (relative error; worst = largest magnitude)",
                days,
                trials),
            rows)
        .note(
            String.format(
                Locale.ROOT,
                "Each trial stores the %d days' sketches with VisitorSketches.toBytes and unions"
                    + " them from the bytes (estimateUnion); the truth is the number of visitors,"
                    + " each with a key of its own. CPC at lgK %d: a merged sketch's theoretical"
                    + " relative standard error is 0.693/sqrt(2^%d) = %s.",
                days,
                VisitorSketches.LG_K,
                VisitorSketches.LG_K,
                pctOf(0.693 / Math.sqrt(1 << VisitorSketches.LG_K))))
        .print(out);
    target(rows, report);
  }

  /** The trials of one size and return pattern, run on {@code pool}. */
  private Accuracy trials(ExecutorService pool, int size, ReturnPattern pattern) throws Exception {
    List<Future<RangeTrial>> futures = new ArrayList<>();
    for (int trial = 0; trial < trials; trial++) {
      long trialSeed = trialSeed(size, pattern, trial);
      futures.add(pool.submit(() -> RangeTrial.run(size, days, pattern, trialSeed)));
    }
    Accuracy accuracy = new Accuracy(size, pattern, new ErrorSummary(), new ErrorSummary());
    for (Future<RangeTrial> future : futures) {
      RangeTrial result = future.get();
      accuracy.sketch().add(result.sketchError());
      accuracy.sum().add(result.sumOfDaysError());
    }
    return accuracy;
  }

  /** The goal is judged on returning visitors only: without them, summing days is exact. */
  private void target(List<Accuracy> rows, Report report) {
    List<ErrorSummary> atTarget =
        rows.stream()
            .filter(r -> r.visitors() == TARGET_VISITORS && r.pattern() != ReturnPattern.NONE)
            .map(Accuracy::sketch)
            .toList();
    double targetWorst =
        atTarget.stream().mapToDouble(e -> Math.abs(e.worst())).max().orElse(Double.NaN);
    int targetTrials = atTarget.stream().mapToInt(ErrorSummary::count).sum();
    boolean measured = !Double.isNaN(targetWorst) && days == 30;
    report.target(
        "range uniques error ≤ 2% at 100,000 visitors over 30 days, returning visitors",
        measured
            ? "worst " + pctOf(targetWorst) + " off, " + targetTrials + " trials"
            : "not measured (needs --visitors with 100k and --days 30)",
        measured && targetWorst <= TARGET_ERROR,
        measured
            ? "patterns: " + ReturnPattern.QUARTER.label() + "; " + ReturnPattern.LOYAL.label()
            : "");
  }

  private void bytes(Report report, PrintStream out) {
    Table t =
        new Table(
            "Stored sketch of one link-day against the day's distinct visitors (bytes)",
            "visitors that day",
            "toBytes, median of " + BYTES_SEEDS,
            "toBytes, max",
            "exact keys (8 × visitors)",
            "exact / sketch");
    int largest = 0;
    for (int size : DAY_SIZES) {
      int[] lengths = new int[BYTES_SEEDS];
      for (int s = 0; s < BYTES_SEEDS; s++) {
        lengths[s] = VisitorSketches.toBytes(randomSketch(size, seed + 31L * s + size)).length;
      }
      Arrays.sort(lengths);
      int median = lengths[BYTES_SEEDS / 2];
      int max = lengths[BYTES_SEEDS - 1];
      largest = Math.max(largest, max);
      t.row(count(size), count(median), count(max), count(8L * size), fmt(8.0 * size / median, 1));
      report.ratio("uniques.sketch_bytes.day" + size, "value", median);
    }
    t.note(
        "Exact keys count the 8-byte keys alone, before any set's or row's overhead. Largest"
            + " sketch seen: "
            + count(largest)
            + " bytes; DataSketches' bound for lgK "
            + VisitorSketches.LG_K
            + ": "
            + count(CpcSketch.getMaxSerializedBytes(VisitorSketches.LG_K))
            + " bytes.");
    t.print(out);
  }

  private void unionTime(Report report, PrintStream out) {
    Table t =
        new Table(
            String.format(
                Locale.ROOT,
                "Union of a range's stored day sketches from bytes, as the stats API does per"
                    + " request (median of %d; indicative: one thread on shared cores)",
                repetitions),
            "range",
            "visitors a day",
            "stored bytes",
            "median µs",
            "µs per day");
    List<int[]> ranges =
        new ArrayList<>(List.of(new int[] {unionDays, denseVisitors}, new int[] {unionDays, 100}));
    if (unionDays != days) {
      ranges.add(new int[] {days, denseVisitors});
    }
    for (int[] range : ranges) {
      List<byte[]> stored = new ArrayList<>();
      long bytes = 0;
      for (int d = 0; d < range[0]; d++) {
        byte[] day = VisitorSketches.toBytes(randomSketch(range[1], seed + 1_000_003L * d));
        stored.add(day);
        bytes += day.length;
      }
      double median = medianMicros(stored);
      t.row(
          range[0] + " days",
          count(range[1]),
          count(bytes),
          fmt(median, 0),
          fmt(median / range[0], 1));
      if (range[0] == unionDays && range[1] == denseVisitors) {
        report.ratio("uniques.union" + unionDays + "d.dense", "median_us", median);
      }
    }
    t.print(out);
  }

  /** Median of timed unions, after as many untimed ones to let the JIT settle. */
  private double medianMicros(List<byte[]> stored) {
    long sink = 0;
    for (int i = 0; i < repetitions; i++) {
      sink += VisitorSketches.estimateUnion(stored);
    }
    double[] micros = new double[repetitions];
    for (int i = 0; i < repetitions; i++) {
      long start = System.nanoTime();
      sink += VisitorSketches.estimateUnion(stored);
      micros[i] = (System.nanoTime() - start) / 1e3;
    }
    // Keeps the estimates observable so no call can be optimised away.
    if (sink == Long.MIN_VALUE) {
      throw new IllegalStateException();
    }
    Arrays.sort(micros);
    return micros[repetitions / 2];
  }

  private static CpcSketch randomSketch(int visitors, long seed) {
    SplittableRandom random = new SplittableRandom(seed);
    CpcSketch sketch = VisitorSketches.newSketch();
    for (int i = 0; i < visitors; i++) {
      sketch.update(random.nextLong());
    }
    return sketch;
  }

  /** Each trial its own seed, and the same one whatever else the run measures. */
  private long trialSeed(int size, ReturnPattern pattern, int trial) {
    long mixed = ((seed * 31 + size) * 31 + pattern.ordinal()) * 31 + trial;
    return new SplittableRandom(mixed).nextLong();
  }

  /** A signed relative error in percent. */
  static String pct(double value) {
    return Double.isNaN(value) ? "–" : String.format(Locale.ROOT, "%+.2f%%", value * 100);
  }

  /** A magnitude in percent. */
  static String pctOf(double value) {
    return Double.isNaN(value) ? "–" : String.format(Locale.ROOT, "%.2f%%", value * 100);
  }

  /** A count with an optional k (thousands) or M (millions) suffix: 10k, 1M, 250000. */
  static final class CountConverter implements ITypeConverter<Integer> {
    @Override
    public Integer convert(String value) {
      String v = value.trim();
      int suffix = "kKmM".indexOf(v.charAt(v.length() - 1));
      long scale = suffix < 0 ? 1 : suffix < 2 ? 1_000 : 1_000_000;
      long n = Long.parseLong(suffix < 0 ? v : v.substring(0, v.length() - 1)) * scale;
      if (n < 1 || n > Integer.MAX_VALUE / 2) {
        throw new IllegalArgumentException("not a count between 1 and 2^30: " + value);
      }
      return (int) n;
    }
  }
}
