package io.tally.bench.redirect;

import static io.tally.testing.Table.fmt;

import com.google.common.hash.BloomFilter;
import io.tally.bench.support.Histograms;
import io.tally.bench.support.Report;
import io.tally.local.LocalServices;
import io.tally.redirect.RedirectWebServer;
import io.tally.redirect.links.KnownCodes;
import io.tally.testing.PrometheusText;
import io.tally.testing.Table;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;

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

  /** Settings of the cell. */
  record Settings(int floodRate, long sizedCodes, Duration duration, Duration warmup) {}

  private record Run(LoadGenerator.Result visitors, double unknown, double lookupsPerUnknown) {}

  private final LocalServices stack;
  private final Settings settings;
  private final PrintStream out;

  UnknownCodeFlood(LocalServices stack, Settings settings, PrintStream out) {
    this.stack = stack;
    this.settings = settings;
    this.out = out;
  }

  void run(RedirectWebServer server, Report report) throws Exception {
    int perRun =
        (int)
            (VISITOR_RATE * (settings.duration().toSeconds() + settings.warmup().toSeconds() + 5));
    List<String> quietLinks = codes("fq", perRun);
    List<String> floodLinks = codes("ff", perRun);
    List<String> all = new ArrayList<>(quietLinks);
    all.addAll(floodLinks);
    stack.insertLinks(all, code -> "https://example.com/fresh/" + code);
    // Notified to the server's set of codes as they commit; a moment for it to read them.
    Thread.sleep(1_000);

    Run quiet = visit(server, quietLinks, false);
    Run flood = visit(server, floodLinks, true);

    double quietP99 = Histograms.ms(quiet.visitors().latency(), 99);
    double floodP99 = Histograms.ms(flood.visitors().latency(), 99);
    double ratio = floodP99 / quietP99;

    BloomFilter<CharSequence> sized = KnownCodes.sizedFor(settings.sizedCodes());
    SplittableRandom random = new SplittableRandom(1);
    for (long i = 0; i < settings.sizedCodes(); i++) {
      sized.put(randomCode(random, "k"));
    }
    int probes = 1_000_000;
    int falsePositives = 0;
    for (int i = 0; i < probes; i++) {
      if (sized.mightContain(randomCode(random, "u"))) {
        falsePositives++;
      }
    }
    double bytesPerCode = (double) KnownCodes.serializedSize(sized) / settings.sizedCodes();
    double fpp = (double) falsePositives / probes;

    Table t =
        new Table(
            String.format(
                Locale.ROOT,
                "bench redirect: never-followed links, %d req/s, alone and during a flood of %d"
                    + " distinct unknown codes/s from %d connections (%d s each)",
                VISITOR_RATE,
                settings.floodRate(),
                FLOOD_CONNECTIONS,
                settings.duration().toSeconds()),
            "run",
            "visitor requests",
            "not 302",
            "visitor p50 ms",
            "visitor p99 ms",
            "unknown codes (404 or 429)",
            "db lookups per unknown code");
    for (var row : List.of(Map.entry("quiet", quiet), Map.entry("flood", flood))) {
      Run r = row.getValue();
      t.row(
          row.getKey(),
          String.valueOf(r.visitors().requests()),
          String.valueOf(r.visitors().errors()),
          fmt(Histograms.ms(r.visitors().latency(), 50), 2),
          fmt(Histograms.ms(r.visitors().latency(), 99), 2),
          String.format(Locale.ROOT, "%.0f", r.unknown()),
          r.unknown() == 0 ? "–" : fmt(r.lookupsPerUnknown(), 4));
    }
    t.note(
        String.format(
            Locale.ROOT,
            "Set of codes sized for %,d codes: %.2f bytes per code, %.3f%% false positives in %,d"
                + " unknown codes.",
            settings.sizedCodes(),
            bytesPerCode,
            fpp * 100,
            probes));
    t.print(out);

    report.ratio("redirect.flood/quiet", "never_followed_p99", ratio);
    report.ratio("redirect.flood", "db_lookups_per_unknown", flood.lookupsPerUnknown());
    report.ratio(
        "redirect.known_codes", "bytes_per_code_at_" + settings.sizedCodes(), bytesPerCode);
    report.target(
        "redirect flood: db lookups per unknown code ≤ " + LOOKUPS_GOAL,
        fmt(flood.lookupsPerUnknown(), 4),
        flood.lookupsPerUnknown() <= LOOKUPS_GOAL,
        "");
    report.target(
        "redirect flood: never-followed p99 flood/quiet ≤ " + P99_GOAL,
        fmt(ratio, 2),
        ratio <= P99_GOAL && flood.visitors().errors() == 0,
        flood.visitors().errors() == 0 ? "" : flood.visitors().errors() + " visitors not 302");
  }

  /**
   * The visitors' run, with the flood beside it or not; what the database spent is read from the
   * server's own counters: each visitor's 302 is one lookup of a link not yet in memory, so what is
   * left over was spent on the 404s.
   */
  private Run visit(RedirectWebServer server, List<String> links, boolean flooded)
      throws Exception {
    int port = server.port();
    Map<String, Double> before = PrometheusText.scrape(server.adminPort());
    LoadGenerator flood = null;
    if (flooded) {
      int unknownCount =
          (int)
              (settings.floodRate()
                  * (settings.duration().toSeconds() + settings.warmup().toSeconds() + 5));
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
      Thread.sleep(settings.warmup().toMillis());
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
      return new Run(result, unknown, unknown == 0 ? 0 : Math.max(0, lookups - found) / unknown);
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
    List<String> codes = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      codes.add(prefix + "-" + i);
    }
    return codes;
  }

  private static String randomCode(SplittableRandom random, String prefix) {
    return prefix + Long.toString(random.nextLong() & Long.MAX_VALUE, 36);
  }
}
