package io.tally.bench.redirect;

import static io.tally.testing.Table.fmt;

import com.google.common.hash.BloomFilter;
import io.tally.bench.support.Columns;
import io.tally.bench.support.Report;
import io.tally.local.LocalServices;
import io.tally.redirect.RedirectWebServer;
import io.tally.redirect.links.KnownCodes;
import io.tally.testing.PrometheusText;
import java.io.PrintStream;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.stream.IntStream;
import java.util.stream.Stream;

/**
 * The flood cell of {@code bench redirect}: visitors follow links never followed before (each one
 * once, so none is in memory and each costs one lookup), first alone, then while one client floods
 * the server with distinct unknown codes at a fixed rate. Prints what the database spent per
 * unknown code and the visitors' p99 with the flood against without, and the memory and false
 * positives of the set of codes at a size no test loads.
 */
final class UnknownCodeFlood {

  /** Requests per second of the visitors: a steady trickle of links not yet in memory. */
  private static final int VISITOR_RATE = 50;

  private static final int VISITOR_CONNECTIONS = 8;
  private static final int FLOOD_CONNECTIONS = 48;
  private static final double P99_GOAL = 2.0;
  private static final double LOOKUPS_GOAL = 0.01;

  /** Unknown codes the set of codes is asked about, for its false positives. */
  private static final int PROBES = 1_000_000;

  /**
   * One run of the visitors: their requests, and the unknown codes the server answered meanwhile.
   */
  private record Run(
      String name, LoadGenerator.Result visitors, double unknown, double lookupsPerUnknown) {}

  private static final Columns<Run> COLUMNS =
      new Columns<Run>()
          .and("run", Run::name)
          .and("visitor requests", r -> r.visitors().requests())
          .and("not 302", r -> r.visitors().errors())
          .and("visitor p50 ms", r -> fmt(r.visitors().ms(50), 2))
          .and("visitor p99 ms", r -> fmt(r.visitors().ms(99), 2))
          .and("unknown codes (404 or 429)", r -> fmt(r.unknown(), 0))
          .and(
              "db lookups per unknown code",
              r -> r.unknown() == 0 ? "–" : fmt(r.lookupsPerUnknown(), 4));

  private final LocalServices stack;
  private final RedirectBenchmark.Settings settings;
  private final PrintStream out;

  /** How long a run asks for codes, warm-up and a margin included: it never runs out of them. */
  private final long runSeconds;

  UnknownCodeFlood(LocalServices stack, RedirectBenchmark.Settings settings, PrintStream out) {
    this.stack = stack;
    this.settings = settings;
    this.out = out;
    this.runSeconds = settings.duration().toSeconds() + settings.cellWarmup().toSeconds() + 5;
  }

  void run(RedirectWebServer server, Report report) throws Exception {
    List<String> quietLinks = codes("fq", (int) (VISITOR_RATE * runSeconds));
    List<String> floodLinks = codes("ff", (int) (VISITOR_RATE * runSeconds));
    stack.insertLinks(
        Stream.concat(quietLinks.stream(), floodLinks.stream()).toList(),
        code -> "https://example.com/fresh/" + code);
    // Notified to the server's set of codes as they commit; a moment for it to read them.
    Thread.sleep(1_000);

    Run quiet = visit(server, "quiet", quietLinks, false);
    Run flood = visit(server, "flood", floodLinks, true);
    double ratio = flood.visitors().ms(99) / quiet.visitors().ms(99);

    SizedSet sized = sizedSet();
    COLUMNS
        .table(
            String.format(
                Locale.ROOT,
                "bench redirect: never-followed links, %d req/s, alone and during a flood of %d"
                    + " distinct unknown codes/s from %d connections (%d s each)",
                VISITOR_RATE,
                settings.floodRate(),
                FLOOD_CONNECTIONS,
                settings.duration().toSeconds()),
            List.of(quiet, flood))
        .note(
            String.format(
                Locale.ROOT,
                "Set of codes sized for %,d codes: %.2f bytes per code, %.3f%% false positives in"
                    + " %,d unknown codes.",
                settings.sizedCodes(),
                sized.bytesPerCode(),
                sized.falsePositiveRate() * 100,
                PROBES))
        .print(out);

    report.ratio("redirect.flood/quiet", "never_followed_p99", ratio);
    report.ratio("redirect.flood", "db_lookups_per_unknown", flood.lookupsPerUnknown());
    report.ratio(
        "redirect.known_codes", "bytes_per_code_at_" + settings.sizedCodes(), sized.bytesPerCode());
    report.target(
        "redirect flood: db lookups per unknown code ≤ " + LOOKUPS_GOAL,
        fmt(flood.lookupsPerUnknown(), 4),
        flood.lookupsPerUnknown() <= LOOKUPS_GOAL,
        "");
    long notFound = flood.visitors().errors();
    report.target(
        "redirect flood: never-followed p99 flood/quiet ≤ " + P99_GOAL,
        fmt(ratio, 2),
        ratio <= P99_GOAL && notFound == 0,
        notFound == 0 ? "" : notFound + " visitors not 302");
  }

  /**
   * The in-memory set of codes, sized and filled for {@code --sized-codes} codes, as it measured.
   */
  private record SizedSet(double bytesPerCode, double falsePositiveRate) {}

  /** Fills a set of codes to the size it was made for and asks it about unknown codes. */
  private SizedSet sizedSet() {
    BloomFilter<CharSequence> codes = KnownCodes.sizedFor(settings.sizedCodes());
    SplittableRandom random = new SplittableRandom(1);
    for (long i = 0; i < settings.sizedCodes(); i++) {
      codes.put(randomCode(random, "k"));
    }
    long falsePositives =
        IntStream.range(0, PROBES).filter(i -> codes.mightContain(randomCode(random, "u"))).count();
    return new SizedSet(
        (double) KnownCodes.serializedSize(codes) / settings.sizedCodes(),
        (double) falsePositives / PROBES);
  }

  /**
   * The visitors' run, with the flood beside it or not; what the database spent is read from the
   * server's own counters: each visitor's 302 is one lookup of a link not yet in memory, so what is
   * left over was spent on the 404s.
   */
  private Run visit(RedirectWebServer server, String name, List<String> links, boolean flooded)
      throws Exception {
    int port = server.port();
    Map<String, Double> before = PrometheusText.scrape(server.adminPort());
    LoadGenerator flood = null;
    if (flooded) {
      int unknownCount = (int) (settings.floodRate() * runSeconds);
      flood =
          LoadGenerator.startAtRate(
              port,
              Workload.sequence("unknown", codes("nx" + System.nanoTime() % 100_000, unknownCount)),
              FLOOD_CONNECTIONS,
              2,
              settings.floodRate());
    }
    try (LoadGenerator visitors =
        LoadGenerator.startAtRate(
            port, Workload.sequence("fresh", links), VISITOR_CONNECTIONS, 1, VISITOR_RATE)) {
      Thread.sleep(settings.cellWarmup().toMillis());
      visitors.phase(0);
      Thread.sleep(settings.duration().toMillis());
      LoadGenerator.Result result = visitors.stop().get(0);
      if (flood != null) {
        flood.stop();
      }
      Map<String, Double> after = PrometheusText.scrape(server.adminPort());
      double lookups = delta(before, after, "tally_link_database_lookups_total");
      double found = delta(before, after, "tally_redirects_total{status=\"302\"}");
      // Over its limit the flooder is answered 429 without a lookup: an unknown code all the same.
      double unknown =
          delta(before, after, "tally_redirects_total{status=\"404\"}")
              + delta(before, after, "tally_redirects_total{status=\"429\"}");
      return new Run(
          name, result, unknown, unknown == 0 ? 0 : Math.max(0, lookups - found) / unknown);
    } finally {
      if (flood != null) {
        flood.close();
      }
    }
  }

  private static double delta(Map<String, Double> before, Map<String, Double> after, String key) {
    return after.getOrDefault(key, 0.0) - before.getOrDefault(key, 0.0);
  }

  private static List<String> codes(String prefix, int count) {
    return IntStream.range(0, count).mapToObj(i -> prefix + "-" + i).toList();
  }

  private static String randomCode(SplittableRandom random, String prefix) {
    return prefix + Long.toString(random.nextLong() & Long.MAX_VALUE, 36);
  }
}
