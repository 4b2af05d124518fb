package io.tally.bench.redirect;

import static io.tally.testing.Table.count;
import static io.tally.testing.Table.fmt;

import io.tally.bench.support.Histograms;
import io.tally.bench.support.Report;
import io.tally.local.LocalServices;
import io.tally.redirect.RedirectWebServer;
import io.tally.testing.PrometheusText;
import io.tally.testing.Table;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.StringJoiner;

/**
 * {@code bench broker-down}: redirect-web in async mode under steady load (Zipf workload) while its
 * only Kafka broker is stopped and restarted. Redirects must keep their speed; clicks that find the
 * producer's buffer full are dropped and counted, and counting resumes by itself.
 */
public final class BrokerDownBenchmark {

  /** What to run. */
  public record Settings(int connections, Duration phase, int links, long seed) {}

  private static final String[] PHASES = {
    "before", "broker stopping + down", "broker restarting", "after restart"
  };
  private static final String SENT = "tally_click_events_sent_total";
  private static final String ACKED = "tally_click_events_acknowledged_total";
  private static final String DROPPED = "tally_click_events_dropped_total";

  private final LocalServices stack;
  private final Settings settings;
  private final PrintStream out;

  public BrokerDownBenchmark(LocalServices stack, Settings settings, PrintStream out) {
    this.stack = stack;
    this.settings = settings;
    this.out = out;
  }

  public void run(Report report) throws Exception {
    List<String> spread = RedirectFixture.spreadCodes(settings.links());
    RedirectFixture.createLinks(stack, spread);
    stack.createClickTopics();
    Workload workload = Workload.zipf(spread, 1.0);
    long phaseMillis = settings.phase().toMillis();
    try (RedirectWebServer server = RedirectFixture.start(stack, CountingMode.ASYNC)) {
      int port = server.port();
      out.printf(
          Locale.ROOT,
          "bench broker-down: async redirect-web on port %d, %d connections, %s workload, %d s"
              + " phases%n",
          port,
          settings.connections(),
          workload.name(),
          settings.phase().toSeconds());
      LoadGenerator load =
          LoadGenerator.start(port, workload, settings.connections(), settings.seed(), 600);
      List<Map<String, Double>> marks = new ArrayList<>();
      long[] phaseStartSecond = new long[PHASES.length];
      long t0 = System.nanoTime();
      List<LoadGenerator.Result> results;
      try {
        Thread.sleep(10_000); // warm-up: a fresh server and producer
        marks.add(PrometheusText.scrape(port));
        phaseStartSecond[0] = seconds(t0);
        load.phase(0);
        Thread.sleep(phaseMillis);

        marks.add(PrometheusText.scrape(port));
        phaseStartSecond[1] = seconds(t0);
        load.phase(1);
        stack.kafka().stop();
        Thread.sleep(phaseMillis);

        marks.add(PrometheusText.scrape(port));
        phaseStartSecond[2] = seconds(t0);
        load.phase(2);
        stack.kafka().restart();

        marks.add(PrometheusText.scrape(port));
        phaseStartSecond[3] = seconds(t0);
        load.phase(3);
        Thread.sleep(phaseMillis);
      } finally {
        results = load.stop();
        stack.kafka().restart();
      }
      marks.add(PrometheusText.scrape(port));
      long endSecond = seconds(t0);

      // Let the producer deliver (or give up on) what it buffered.
      Map<String, Double> last = PrometheusText.scrape(port);
      long deadline = System.nanoTime() + Duration.ofSeconds(150).toNanos();
      while (PrometheusText.sum(last, ACKED) + PrometheusText.sum(last, DROPPED)
              < PrometheusText.sum(last, SENT)
          && System.nanoTime() < deadline) {
        Thread.sleep(500);
        last = PrometheusText.scrape(port);
      }

      Table t =
          new Table(
              "bench broker-down: async redirects while the Kafka broker stops and restarts",
              "phase",
              "seconds",
              "req/s",
              "p50 ms",
              "p99 ms",
              "p99.9 ms",
              "max ms",
              "errors",
              "events sent",
              "acknowledged",
              "dropped");
      for (int p = 0; p < results.size(); p++) {
        LoadGenerator.Result r = results.get(p);
        Map<String, Double> a = marks.get(p);
        Map<String, Double> b = marks.get(p + 1);
        t.row(
            PHASES[p],
            fmt(r.seconds(), 1),
            fmt(r.throughput(), 0),
            fmt(Histograms.ms(r.latency(), 50), 2),
            fmt(Histograms.ms(r.latency(), 99), 2),
            fmt(Histograms.ms(r.latency(), 99.9), 2),
            fmt(Histograms.maxMs(r.latency()), 1),
            r.errors(),
            delta(a, b, SENT),
            delta(a, b, ACKED),
            delta(a, b, DROPPED));
      }
      StringJoiner timeline = new StringJoiner(" ");
      long[] perSecond = load.perSecond();
      for (long s = phaseStartSecond[0]; s < Math.min(endSecond, perSecond.length); s++) {
        String marker = "";
        for (int p = 1; p < PHASES.length; p++) {
          if (phaseStartSecond[p] == s) {
            marker = p == 1 ? "[stop] " : p == 2 ? "[restart] " : "[up] ";
          }
        }
        timeline.add(marker + perSecond[(int) s]);
      }
      double answered = load.totalRedirects();
      t.note("Responses per second from the first measured second: " + timeline);
      t.note(
          String.format(
              Locale.ROOT,
              "After the run (buffer drained): redirects answered %s (warm-up included), events"
                  + " sent %s, acknowledged %s, dropped %s (%s).",
              count((long) answered),
              count((long) PrometheusText.sum(last, SENT)),
              count((long) PrometheusText.sum(last, ACKED)),
              count((long) PrometheusText.sum(last, DROPPED)),
              RedirectFixture.dropsByReason(last)));
      t.note(
          "Acknowledged per phase counts acknowledgements that arrived in that phase, whenever the"
              + " event was sent. The producer's buffer is 8 MiB (TALLY_KAFKA_BUFFER_BYTES) and"
              + " max.block.ms 2 ms.");
      t.print(out);

      LoadGenerator.Result before = results.get(0);
      LoadGenerator.Result down = results.get(1);
      LoadGenerator.Result after = results.get(3);
      report.ratio(
          "broker-down.down/before", "throughput", down.throughput() / before.throughput());
      report.ratio(
          "broker-down.down/before",
          "p99",
          Histograms.ms(down.latency(), 99) / Histograms.ms(before.latency(), 99));
      report.ratio(
          "broker-down.after/before", "throughput", after.throughput() / before.throughput());
      report.ratio(
          "broker-down.after/before",
          "p99",
          Histograms.ms(after.latency(), 99) / Histograms.ms(before.latency(), 99));
      // Requests in flight when the load stopped were counted by the server but never read by the
      // client.
      long redirectsVsSent = (long) (answered - PrometheusText.sum(last, SENT));
      long unaccounted =
          (long)
              (PrometheusText.sum(last, SENT)
                  - PrometheusText.sum(last, ACKED)
                  - PrometheusText.sum(last, DROPPED));
      long errors = results.stream().mapToLong(LoadGenerator.Result::errors).sum();
      report.target(
          "broker-down: every redirect answered, each click acknowledged or counted as dropped",
          "errors "
              + errors
              + ", clicks not sent "
              + Math.max(0, redirectsVsSent)
              + " ("
              + Math.max(0, -redirectsVsSent)
              + " in flight at the stop), sent but neither acknowledged nor dropped "
              + unaccounted,
          errors == 0
              && redirectsVsSent <= 0
              && -redirectsVsSent <= settings.connections()
              && unaccounted == 0,
          "no figure in the issue");
    }
  }

  private static long seconds(long t0) {
    return (System.nanoTime() - t0) / 1_000_000_000L;
  }

  private static String delta(Map<String, Double> a, Map<String, Double> b, String name) {
    return count((long) (PrometheusText.sum(b, name) - PrometheusText.sum(a, name)));
  }
}
