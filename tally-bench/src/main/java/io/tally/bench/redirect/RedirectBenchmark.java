package io.tally.bench.redirect;

import static io.tally.testing.Table.count;
import static io.tally.testing.Table.fmt;

import io.tally.bench.support.Columns;
import io.tally.bench.support.CpuMeter;
import io.tally.bench.support.CpuMeter.Role;
import io.tally.bench.support.Report;
import io.tally.bench.support.Sql;
import io.tally.local.LocalServices;
import io.tally.redirect.RedirectWebServer;
import io.tally.testing.Table;
import java.io.PrintStream;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToDoubleFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code bench redirect}: the same redirect-web with three ways of counting ({@link CountingMode}:
 * off, async, sync), one server per mode in this JVM, measured cell by cell side by side: for each
 * workload (one hot link, a Zipf spread) and each number of connections, the three modes run back
 * to back, in an order that rotates from cell to cell so none always runs first or last.
 */
public final class RedirectBenchmark {

  private static final Logger LOG = LoggerFactory.getLogger(RedirectBenchmark.class);
  private static final CountingMode[] MODES = CountingMode.values();

  /** What to run. */
  public record Settings(
      List<Integer> connections,
      Duration duration,
      Duration cellWarmup,
      Duration warmup,
      int spreadLinks,
      double zipfExponent,
      long seed,
      List<Integer> fixedRates,
      int fixedRateConnections,
      int floodRate,
      long sizedCodes) {}

  /**
   * One mode's run of a workload at one level: connections in a closed loop, requests per second at
   * a fixed rate; the CPU and PostgreSQL figures only in a closed loop.
   */
  private record Cell(
      String workload,
      int level,
      boolean atRate,
      CountingMode mode,
      LoadGenerator.Result result,
      CpuMeter.Usage cpu,
      PgSampler.Stats pg) {

    String modeName() {
      return mode.name().toLowerCase(Locale.ROOT);
    }

    double p99() {
      return result.ms(99);
    }

    /** Microseconds of {@code cores} per answered redirect. */
    double micros(double cores) {
      return cores * 1e6 / result.throughput();
    }

    /** Rows sorted hot link first, then by connections, then by mode. */
    int order() {
      return (workload.equals("hot") ? 0 : 1_000_000) + level * 10 + mode.ordinal();
    }
  }

  /** The three modes' cells of one workload and level, async against the other two. */
  private record Comparison(Cell off, Cell async, Cell sync) {

    String workload() {
      return off.workload();
    }

    int level() {
      return off.level();
    }

    List<Cell> cells() {
      return List.of(off, async, sync);
    }

    /** The workload and level, as a target names the cell: {@code hot c64}, {@code hot at 500}. */
    String where() {
      return workload() + (off.atRate() ? " at " : " c") + level();
    }

    double throughputOver(Cell other) {
      return async.result().throughput() / other.result().throughput();
    }

    double p99Over(Cell other) {
      return async.p99() / other.p99();
    }

    double p99MinusOff() {
      return async.p99() - off.p99();
    }

    /** What async adds over off per redirect in microseconds, of the cores {@code cpu} picks. */
    String addedMicros(ToDoubleFunction<CpuMeter.Usage> cpu) {
      return fmt(
          async.micros(cpu.applyAsDouble(async.cpu())) - off.micros(cpu.applyAsDouble(off.cpu())),
          1);
    }
  }

  private static final Columns<Cell> WHERE =
      new Columns<Cell>().and("workload", Cell::workload).and("conns", Cell::level);
  private static final Columns<Cell> CELL = WHERE.and("mode", Cell::modeName);

  private final LocalServices stack;
  private final Settings settings;
  private final PrintStream out;
  private final CpuMeter cpu;
  private final Map<CountingMode, Long> redirects = new EnumMap<>(CountingMode.class);

  /** Advances after every workload and level, so that the modes' order rotates. */
  private int rotation;

  public RedirectBenchmark(LocalServices stack, Settings settings, PrintStream out) {
    this.stack = stack;
    this.settings = settings;
    this.out = out;
    this.cpu = new CpuMeter(stack.postmasterPid());
  }

  public void run(Report report) throws Exception {
    List<String> spread = RedirectFixture.spreadCodes(settings.spreadLinks());
    RedirectFixture.createLinks(stack, spread);
    stack.createClickTopics();
    List<Workload> workloads =
        List.of(
            Workload.hot(RedirectFixture.HOT_CODE), Workload.zipf(spread, settings.zipfExponent()));

    Map<CountingMode, RedirectWebServer> servers = new EnumMap<>(CountingMode.class);
    try {
      for (CountingMode mode : MODES) {
        servers.put(mode, RedirectFixture.start(stack, mode));
      }
      out.printf(
          Locale.ROOT,
          "bench redirect: modes off/async/sync on ports %d/%d/%d; %s per cell after %s;"
              + " initial warm-up %s%n",
          servers.get(CountingMode.OFF).port(),
          servers.get(CountingMode.ASYNC).port(),
          servers.get(CountingMode.SYNC).port(),
          settings.duration().toSeconds() + " s",
          settings.cellWarmup().toSeconds() + " s",
          settings.warmup().toSeconds() + " s");
      warmUp(servers, workloads);
      List<Comparison> closed = compareModes(servers, workloads, settings.connections(), false);
      printClosedLoop(closed, workloads.get(1), report);
      List<Comparison> paced = compareModes(servers, workloads, settings.fixedRates(), true);
      if (!paced.isEmpty()) {
        printFixedRate(paced, report);
      }
      checkCounting(servers.get(CountingMode.ASYNC).port());
      if (settings.floodRate() > 0) {
        new UnknownCodeFlood(stack, settings, out).run(servers.get(CountingMode.ASYNC), report);
      }
    } finally {
      for (RedirectWebServer server : servers.values()) {
        server.close();
      }
    }
  }

  /** Load on every server and workload in turn, so the JIT, the pools and the broker are warm. */
  private void warmUp(Map<CountingMode, RedirectWebServer> servers, List<Workload> workloads)
      throws Exception {
    long slices = (long) MODES.length * workloads.size();
    long each = Math.max(1000, settings.warmup().toMillis() / slices);
    for (Workload workload : workloads) {
      for (CountingMode mode : MODES) {
        try (LoadGenerator load =
            LoadGenerator.start(servers.get(mode).port(), workload, 16, settings.seed(), 0)) {
          Thread.sleep(each);
          load.stop();
          redirects.merge(mode, load.totalRedirects(), Long::sum);
        }
      }
    }
  }

  /** Every mode at every workload and level, the modes back to back in a rotating order. */
  private List<Comparison> compareModes(
      Map<CountingMode, RedirectWebServer> servers,
      List<Workload> workloads,
      List<Integer> levels,
      boolean atRate)
      throws Exception {
    List<Comparison> comparisons = new ArrayList<>();
    for (Workload workload : workloads) {
      for (int level : levels) {
        Map<CountingMode, Cell> cells = new EnumMap<>(CountingMode.class);
        for (int i = 0; i < MODES.length; i++) {
          CountingMode mode = MODES[(i + rotation) % MODES.length];
          cells.put(mode, measure(servers.get(mode), mode, workload, level, atRate));
        }
        rotation++;
        comparisons.add(
            new Comparison(
                cells.get(CountingMode.OFF),
                cells.get(CountingMode.ASYNC),
                cells.get(CountingMode.SYNC)));
      }
    }
    return comparisons;
  }

  private Cell measure(
      RedirectWebServer server, CountingMode mode, Workload workload, int level, boolean atRate)
      throws Exception {
    long seed = settings.seed() + level;
    LoadGenerator load =
        atRate
            ? LoadGenerator.startAtRate(
                server.port(), workload, settings.fixedRateConnections(), seed, level)
            : LoadGenerator.start(server.port(), workload, level, seed, 0);
    Thread.sleep(settings.cellWarmup().toMillis());
    CpuMeter.Snapshot before = cpu.snapshot();
    PgSampler pg = atRate ? null : new PgSampler(this::connection, 20);
    load.phase(0);
    Thread.sleep(settings.duration().toMillis());
    // Before stopping: the load generator's threads end with it, and a thread's CPU time goes with
    // the thread.
    CpuMeter.Snapshot after = cpu.snapshot();
    LoadGenerator.Result result = load.stop().get(0);
    PgSampler.Stats stats = null;
    if (pg != null) {
      stats = pg.stop();
      pg.close();
    }
    redirects.merge(mode, load.totalRedirects(), Long::sum);
    Cell cell =
        new Cell(workload.name(), level, atRate, mode, result, cpu.between(before, after), stats);
    LOG.info(
        "{} {} {}: {} req/s, p99 {} ms",
        workload.name(),
        (atRate ? "rate" : "c") + level,
        mode,
        fmt(result.throughput(), 0),
        fmt(cell.p99(), 2));
    out.printf(
        Locale.ROOT,
        "  %-8s %s  %-5s %9s req/s  p50 %6s  p99 %7s ms%n",
        workload.name(),
        String.format(Locale.ROOT, atRate ? "%6d req/s offered" : "%3d connections", level),
        cell.modeName(),
        fmt(result.throughput(), 0),
        fmt(result.ms(50), 2),
        fmt(cell.p99(), 2));
    return cell;
  }

  private Connection connection() {
    try {
      return stack.connect();
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  private void printClosedLoop(List<Comparison> comparisons, Workload spread, Report report) {
    List<Cell> cells =
        comparisons.stream()
            .flatMap(c -> c.cells().stream())
            .sorted(Comparator.comparingInt(Cell::order))
            .toList();
    CELL.and("req/s", c -> fmt(c.result().throughput(), 0))
        .and(LoadGenerator.LATENCY, Cell::result)
        .and(
            "client CPU µs/req",
            c -> fmt(c.result().clientCpuSeconds() * 1e6 / Math.max(1, c.result().requests()), 1))
        .table(
            "bench redirect: throughput and latency (closed loop, "
                + settings.duration().toSeconds()
                + " s per cell)",
            cells)
        .note(
            "hot = every request for one link; "
                + spread.name()
                + " = Zipf(s="
                + settings.zipfExponent()
                + ") over "
                + settings.spreadLinks()
                + " links (top link "
                + fmt(spread.topShare() * 100, 1)
                + "% of requests). Latency is measured by the client, per request, in"
                + " HdrHistogram.")
        .print(out);

    new Columns<Comparison>()
        .and(WHERE, Comparison::off)
        .and("async/off req/s", c -> fmt(c.throughputOver(c.off()), 2))
        .and("async/off p99", c -> fmt(c.p99Over(c.off()), 2))
        .and("async p99 − off p99 ms", c -> fmt(c.p99MinusOff(), 2))
        .and("async/sync req/s", c -> fmt(c.throughputOver(c.sync()), 2))
        .and("async/sync p99", c -> fmt(c.p99Over(c.sync()), 3))
        .table("bench redirect: ratios measured side by side", comparisons)
        .print(out);
    for (Comparison c : comparisons) {
      String what = "redirect." + c.workload() + ".c" + c.level();
      report.ratio(what + ".async/off", "throughput", c.throughputOver(c.off()));
      report.ratio(what + ".async/off", "p99", c.p99Over(c.off()));
      report.ratio(what + ".async/sync", "throughput", c.throughputOver(c.sync()));
      report.ratio(what + ".async/sync", "p99", c.p99Over(c.sync()));
    }
    targets(comparisons, report);
    printCpu(cells, comparisons);
    printSync(cells.stream().filter(c -> c.mode() == CountingMode.SYNC).toList());
  }

  private void targets(List<Comparison> comparisons, Report report) {
    ToDoubleFunction<Comparison> overOff = c -> c.throughputOver(c.off());
    double geomean =
        Math.exp(comparisons.stream().mapToDouble(overOff).map(Math::log).average().orElseThrow());
    Comparison slowest =
        comparisons.stream().min(Comparator.comparingDouble(overOff)).orElseThrow();
    double worst = overOff.applyAsDouble(slowest);
    report.ratio("redirect.async/off", "throughput_geomean", geomean);
    report.ratio("redirect.async/off", "throughput_min", worst);
    report.target(
        "redirect: async throughput ≥ 0.9× off",
        "min " + fmt(worst, 2) + " (" + slowest.where() + "), geomean " + fmt(geomean, 2),
        worst >= 0.9,
        "every workload and level");
    Comparison widest = widest(comparisons);
    report.target(
        "redirect: async p99 ≤ off p99 + 1 ms",
        "worst +" + fmt(widest.p99MinusOff(), 2) + " ms (" + widest.where() + ")",
        widest.p99MinusOff() <= 1.0,
        "every workload and level");
    int top = settings.connections().stream().mapToInt(Integer::intValue).max().orElseThrow();
    Comparison hot =
        comparisons.stream()
            .filter(c -> c.workload().equals("hot") && c.level() == top)
            .findFirst()
            .orElseThrow();
    String hotCell = "redirect: hot link, " + top + " conns: ";
    report.target(
        hotCell + "async ≥ 3× sync req/s",
        fmt(hot.throughputOver(hot.sync()), 2) + "×",
        hot.throughputOver(hot.sync()) >= 3,
        "");
    report.target(
        hotCell + "async p99 ≤ ⅓ sync p99",
        "async/sync p99 " + fmt(hot.p99Over(hot.sync()), 3),
        hot.p99Over(hot.sync()) <= 1.0 / 3,
        "");
  }

  /** The comparison where async's p99 is furthest above off's. */
  private static Comparison widest(List<Comparison> comparisons) {
    return comparisons.stream()
        .max(Comparator.comparingDouble(Comparison::p99MinusOff))
        .orElseThrow();
  }

  private void printCpu(List<Cell> cells, List<Comparison> comparisons) {
    Columns<Cell> columns =
        CELL.and("machine busy", c -> fmt(c.cpu().machineBusy(), 2))
            .and("iowait", c -> fmt(c.cpu().machineIowait(), 2));
    for (Role role : Role.values()) {
      columns = columns.and(role.label, c -> fmt(c.cpu().role(role), 2));
    }
    columns
        .and("PostgreSQL", c -> fmt(c.cpu().postgres(), 2))
        .and("busy µs/req", c -> fmt(c.micros(c.cpu().machineBusy()), 0))
        .table(
            "bench redirect: where the CPU goes (cores; the machine has "
                + Runtime.getRuntime().availableProcessors()
                + ")",
            cells)
        .note(
            "Everything but PostgreSQL runs in one JVM; its threads are told apart by name. \"busy"
                + " µs/req\" is machine CPU time per answered redirect, load generator included.")
        .print(out);

    Columns<Comparison> added = new Columns<Comparison>().and(WHERE, Comparison::off);
    for (Role role : List.of(Role.HTTP, Role.PRODUCER, Role.BROKER, Role.OTHER, Role.CLIENT)) {
      added = added.and(role.label, c -> c.addedMicros(usage -> usage.role(role)));
    }
    added
        .and("all", c -> c.addedMicros(CpuMeter.Usage::machineBusy))
        .table(
            "bench redirect: what counting asynchronously adds per redirect (CPU µs, async minus"
                + " off)",
            comparisons)
        .note(
            "Each role's cores divided by the cell's redirects per second. The broker runs on the"
                + " same two cores here; in production it is on other machines, and only the HTTP"
                + " server and producer I/O columns stay on the redirect's.")
        .print(out);
  }

  private void printSync(List<Cell> cells) {
    WHERE
        .and("commits/s", c -> fmt(c.pg().commitsPerSecond(), 0))
        .and("busy backends", c -> fmt(c.pg().totalBusyBackends(), 1))
        .and("PG running ms", c -> fmt(c.pg().msPerCommit(PgSampler.State.CPU), 2))
        .and("row lock wait ms", c -> fmt(c.pg().msPerCommit(PgSampler.State.ROW_LOCK), 2))
        .and("WAL flush wait ms", c -> fmt(c.pg().msPerCommit(PgSampler.State.WAL_FLUSH), 2))
        .and("other wait ms", c -> fmt(c.pg().msPerCommit(PgSampler.State.OTHER), 2))
        .and(
            "fsyncs/commit",
            c -> fmt(c.pg().walSyncs() / (double) Math.max(1, c.pg().commits()), 2))
        .and("avg fsync ms", c -> fmt(c.pg().avgFsyncMs(), 2))
        .and("mean latency ms", c -> fmt(meanMs(c), 2))
        .and("outside PG ms", c -> fmt(meanMs(c) - c.pg().msInPostgres(), 2))
        .and("dominant", RedirectBenchmark::dominant)
        .table("bench redirect: sync mode, where a counted redirect's time goes", cells)
        .note(
            "From pg_stat_activity sampled every 20 ms (busy client backends by wait event),"
                + " pg_stat_database.xact_commit and pg_stat_wal (wal_sync, wal_sync_time). Time"
                + " per commit in a state = backends in that state / commits per second (Little's"
                + " law). \"outside PG\" = client-seen mean latency minus time inside PostgreSQL:"
                + " HTTP, the connection pool queue (32 connections) and the load generator.")
        .print(out);
  }

  private static double meanMs(Cell cell) {
    return cell.result().latency().getMean() / 1e6;
  }

  /** Where a sync redirect spends most of its time, and whether the machine's CPU ran out. */
  private static String dominant(Cell cell) {
    Map<String, Double> parts = new LinkedHashMap<>();
    parts.put("row lock wait", cell.pg().msPerCommit(PgSampler.State.ROW_LOCK));
    parts.put("WAL flush (commit)", cell.pg().msPerCommit(PgSampler.State.WAL_FLUSH));
    parts.put("PostgreSQL CPU", cell.pg().msPerCommit(PgSampler.State.CPU));
    parts.put("outside PostgreSQL", meanMs(cell) - cell.pg().msInPostgres());
    String dominant =
        parts.entrySet().stream().max(Map.Entry.comparingByValue()).orElseThrow().getKey();
    boolean saturated =
        cell.cpu().machineBusy() >= 0.9 * Runtime.getRuntime().availableProcessors();
    return saturated ? dominant + "; CPU saturated" : dominant;
  }

  private void printFixedRate(List<Comparison> comparisons, Report report) {
    new Columns<Cell>()
        .and("workload", Cell::workload)
        .and("offered req/s", Cell::level)
        .and("mode", Cell::modeName)
        .and("answered req/s", c -> fmt(c.result().throughput(), 0))
        .and(LoadGenerator.LATENCY, Cell::result)
        .table(
            "bench redirect: latency at a fixed arrival rate (open loop, "
                + settings.fixedRateConnections()
                + " connections, "
                + settings.duration().toSeconds()
                + " s per cell)",
            comparisons.stream().flatMap(c -> c.cells().stream()).toList())
        .note(
            "Each request is due at a fixed time whatever the server does, and its latency counts"
                + " from then, so a mode that cannot keep up shows its queue in the latency instead"
                + " of sending less (no coordinated omission). At the same offered load the modes"
                + " compare on latency alone.")
        .print(out);

    new Columns<Comparison>()
        .and("workload", Comparison::workload)
        .and("offered req/s", Comparison::level)
        .and("async/off p99", c -> fmt(c.p99Over(c.off()), 2))
        .and("async p99 − off p99 ms", c -> fmt(c.p99MinusOff(), 2))
        .and("async/sync p99", c -> fmt(c.p99Over(c.sync()), 3))
        .table("bench redirect: fixed-rate ratios", comparisons)
        .print(out);
    for (Comparison c : comparisons) {
      String what = "redirect." + c.workload() + ".rate" + c.level();
      report.ratio(what + ".async/off", "p99", c.p99Over(c.off()));
      report.ratio(what + ".async/sync", "p99", c.p99Over(c.sync()));
    }
    // At a fixed rate the modes meet the same load, so the gap between them is latency alone.
    Comparison widest = widest(comparisons);
    report.ratio("redirect.async-off", "p99_fixed_rate_ms", widest.p99MinusOff());
    report.target(
        "redirect: async p99 ≤ off p99 + 1 ms at fixed rates",
        String.format(
            Locale.ROOT, "worst %+.2f ms (%s req/s)", widest.p99MinusOff(), widest.where()),
        widest.p99MinusOff() <= 1.0,
        "every workload and rate");
  }

  /**
   * After the cells: the sync counter and the async producer must account for every redirect they
   * answered.
   */
  private void checkCounting(int asyncPort) throws Exception {
    long syncClicks = Sql.firstRow(stack, "SELECT coalesce(sum(clicks), 0) FROM links")[0];
    ClickCounters async = ClickCounters.awaitSettled(asyncPort, Duration.ofSeconds(60));
    new Table(
            "bench redirect: every answered redirect counted?",
            "mode",
            "redirects answered",
            "counted",
            "how counted",
            "dropped")
        .row(
            "sync",
            count(redirects(CountingMode.SYNC)),
            count(syncClicks),
            "sum(links.clicks)",
            "–")
        .row(
            "async",
            count(redirects(CountingMode.ASYNC)),
            count((long) async.acknowledged()),
            "events acknowledged by Kafka",
            async.dropsByReason())
        .note(
            "Warm-up included. The async count is the producer's: events the broker acknowledged"
                + " (sent "
                + fmt(async.sent(), 0)
                + "). Counted may exceed answered by the requests still in flight when each run's"
                + " load stopped (at most its connections per run): the server counted them, the"
                + " client never read their answers.")
        .print(out);
  }

  private long redirects(CountingMode mode) {
    return redirects.getOrDefault(mode, 0L);
  }
}
