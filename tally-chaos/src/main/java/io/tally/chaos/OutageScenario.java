package io.tally.chaos;

import static io.tally.testing.PrometheusText.sum;

import io.tally.local.RunningClickJob;
import io.tally.redirect.RedirectWebServer;
import io.tally.testing.PrometheusText;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The frame of the scenarios that break a service under redirect load: links created and the click
 * job and redirect-web (async counting, behind a trusted proxy) started; load at a steady rate; the
 * fault for a while; the fault healed; load a while longer. Then the claims every such scenario
 * shares: every redirect answered 302, clicks = delivered + dropped exactly (redirect-web's own
 * metrics), the job counting exactly the delivered clicks, and no client address in either topic,
 * any table or the logs. Recovery is the time from the heal until the job has counted every
 * delivered click.
 */
abstract class OutageScenario extends Scenario {

  static final String SENT = "tally_click_events_sent_total";
  static final String ACKED = "tally_click_events_acknowledged_total";
  static final String DROPPED = "tally_click_events_dropped_total";
  private static final Duration STEADY = Duration.ofSeconds(10);

  OutageScenario(String name, String title) {
    super(name, title);
  }

  /** Breaks the service; by default nothing, for a scenario whose fault is the load it adds. */
  void fault(ChaosStack stack) throws Exception {}

  /**
   * Called about once a second while the fault lasts, to observe the system; {@code webPort} is
   * redirect-web's.
   */
  void whileDown(ChaosStack stack, RunningClickJob job, int webPort, Outcome outcome)
      throws Exception {}

  /** Called once the load has stopped and before the shared claims, to add the scenario's own. */
  void afterLoad(ChaosStack stack, Outcome outcome) throws Exception {}

  /** Starts the click job: by default in a MiniCluster of its own JVM. */
  RunningClickJob startJob(ChaosStack stack) throws Exception {
    return stack.startJob();
  }

  /** Mends the service. */
  abstract void heal(ChaosStack stack) throws Exception;

  /**
   * Redirects a scenario sent besides the visitors' load, by status, once it has healed: counted
   * with the visitors' in every shared claim.
   */
  Map<Integer, Long> otherRedirects() {
    return Map.of();
  }

  /** redirect-web settings on top of the defaults and the trusted proxy. */
  Map<String, String> webEnv() {
    return Map.of();
  }

  /** The visitors' load while the scenario runs, for a scenario that measures it. */
  HttpLoad load;

  /** How long the fault lasts: by default the run's outage. */
  Duration length(ChaosSettings settings) {
    return settings.outage();
  }

  /** Creates the links the load follows and returns their codes: 50 by default. */
  List<String> links(ChaosStack stack) throws Exception {
    return stack.createLinks("o", 50);
  }

  @Override
  public Outcome run(ChaosStack stack) throws Exception {
    Outcome outcome = new Outcome(name());
    ChaosSettings settings = stack.settings();
    List<String> codes = links(stack);
    RunningClickJob job = startJob(stack);
    long healedAt;
    double ackedAtHeal;
    Map<String, Double> metrics;
    Map<String, String> env = new HashMap<>(webEnv());
    env.put("TALLY_TRUSTED_PROXIES", "127.0.0.1,::1");
    try (RedirectWebServer web = stack.startRedirectWeb(env)) {
      web.awaitClickTopic(Duration.ofSeconds(30));
      try (HttpLoad load = HttpLoad.visitors(web.port(), codes, settings.redirectRate(), 8);
          FirstCountAfter firstCount = new FirstCountAfter(stack)) {
        this.load = load;
        Thread.sleep(STEADY.toMillis());
        firstCount.start(sum(PrometheusText.scrape(web.port()), ACKED));
        fault(stack);
        long end = System.nanoTime() + length(settings).toNanos();
        try {
          while (System.nanoTime() < end) {
            whileDown(stack, job, web.port(), outcome);
            Thread.sleep(Math.max(0, Math.min(1000, (end - System.nanoTime()) / 1_000_000)));
          }
        } finally {
          heal(stack);
        }
        healedAt = System.nanoTime();
        ackedAtHeal = sum(PrometheusText.scrape(web.port()), ACKED);
        Thread.sleep(STEADY.toMillis());
        outcome.note(firstCount.describe());
        load.close();
        outcome.redirects.putAll(load.byStatus());
        otherRedirects().forEach((status, n) -> outcome.redirects.merge(status, n, Long::sum));
        outcome.note(
            String.format(Locale.ROOT, "slowest redirect %.0f ms", load.slowest().toNanos() / 1e6));
      }
      metrics = settledMetrics(web.port());
    }
    long answered = outcome.redirects.values().stream().mapToLong(Long::longValue).sum();
    long found = outcome.redirects.getOrDefault(302, 0L);
    outcome.clicksSent = answered;
    readProducer(metrics, outcome);
    long dropped = outcome.dropped.values().stream().mapToLong(Long::longValue).sum();
    outcome.check(
        "100% of redirects answered 302",
        found == answered && answered > 0, found + " of " + answered);
    outcome.check(
        "every redirect published its click",
        outcome.producerSent == found,
        outcome.producerSent + " published, " + found + " redirects");
    outcome.check(
        "clicks = delivered + dropped, exactly",
        outcome.producerSent == outcome.producerDelivered + dropped,
        outcome.producerSent + " = " + outcome.producerDelivered + " + " + dropped);
    long sentAfterHeal = (long) (outcome.producerDelivered - ackedAtHeal);
    outcome.check(
        "sending resumed after the heal",
        sentAfterHeal > 0,
        sentAfterHeal + " clicks acknowledged after it");

    afterLoad(stack, outcome);
    long delivered = outcome.producerDelivered;
    long counted = ChaosStack.poll(stack::clicks, n -> n == delivered, settings.settle());
    if (counted == delivered) {
      outcome.recovery = Duration.ofNanos(System.nanoTime() - healedAt);
    }
    outcome.drift = Map.of("click_counts total against delivered", Math.abs(counted - delivered));
    stack.recordLettersAndRestarts(outcome);
    outcome.check(
        "the job counted every delivered click once",
        counted == delivered,
        counted + " counted, " + delivered + " delivered");

    List<Path> logs = new ArrayList<>(job.logFiles());
    Optional.ofNullable(System.getProperty("log.file")).map(Path::of).ifPresent(logs::add);
    Map<String, Long> hits = PrivacyScan.scan(stack, HttpLoad.CLIENT_ADDRESSES, logs);
    outcome.check(
        "no client address in either topic, any table or the logs",
        hits.isEmpty(),
        hits.isEmpty()
            ? "0 hits in 2 topics, every table, " + logs.size() + " logs"
            : hits.toString());
    return outcome;
  }

  /**
   * The time from the fault until the job's total first exceeds every click acknowledged before it:
   * then at least one click made after the fault is counted. Watched from a thread of its own,
   * since a database that is the fault (paused, or failing over) may hold a query for as long as it
   * lasts, and the scenario's loop must go on observing and then heal it.
   */
  private static final class FirstCountAfter implements AutoCloseable {
    private final ChaosStack stack;
    private long faultAt;
    private Thread watcher;
    private volatile Duration after;

    FirstCountAfter(ChaosStack stack) {
      this.stack = stack;
    }

    /** Starts watching, just before the fault, for a total above {@code ackedBefore}. */
    void start(double ackedBefore) {
      faultAt = System.nanoTime();
      watcher =
          new Thread(
              () -> {
                while (!Thread.currentThread().isInterrupted()) {
                  if (stack.clicks() > ackedBefore) {
                    after = Duration.ofNanos(System.nanoTime() - faultAt);
                    return;
                  }
                  try {
                    Thread.sleep(250);
                  } catch (InterruptedException e) {
                    return;
                  }
                }
              },
              "first-count-after-fault");
      watcher.setDaemon(true);
      watcher.start();
    }

    String describe() {
      Duration seen = after;
      return seen == null
          ? "no click made after the fault counted within the heal and "
              + STEADY.toSeconds()
              + " s after it"
          : String.format(
              Locale.ROOT,
              "first click after the fault counted %.1f s after it",
              seen.toMillis() / 1e3);
    }

    @Override
    public void close() {
      if (watcher != null) {
        watcher.interrupt();
      }
    }
  }

  /**
   * redirect-web's metrics once whatever its producer still buffers is delivered or given up on (at
   * most 150 s).
   */
  static Map<String, Double> settledMetrics(int webPort) throws Exception {
    return ChaosStack.poll(
        () -> PrometheusText.scrape(webPort),
        m -> sum(m, ACKED) + sum(m, DROPPED) >= sum(m, SENT),
        Duration.ofSeconds(150));
  }

  /** The producer's columns of {@code outcome}: sent, delivered, and dropped by reason. */
  static void readProducer(Map<String, Double> metrics, Outcome outcome) {
    outcome.producerSent = (long) sum(metrics, SENT);
    outcome.producerDelivered = (long) sum(metrics, ACKED);
    metrics.forEach(
        (series, value) -> {
          if (series.startsWith(DROPPED + "{") && value > 0) {
            int at = series.indexOf("reason=\"");
            outcome.dropped.put(
                series.substring(at + 8, series.indexOf('"', at + 8)), value.longValue());
          }
        });
  }
}
