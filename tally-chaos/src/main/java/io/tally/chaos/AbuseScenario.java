package io.tally.chaos;

import io.tally.local.RunningClickJob;
import java.net.http.HttpRequest;
import java.net.http.HttpRequest.BodyPublishers;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntFunction;
import org.HdrHistogram.Histogram;

/**
 * Scenario 11: one client, behind the trusted proxy as behind an ingress, floods redirect-web with
 * distinct unknown codes, stats requests and link creations, while visitors from other addresses
 * follow 2,000 links, most of them never followed before. The flooder is answered 404 and then 429;
 * the visitors are answered 302 as fast as before the flood, every click counted, and PostgreSQL
 * sees no more connections than redirect-web's pools hold (the other claims are {@link
 * OutageScenario}'s).
 */
final class AbuseScenario extends OutageScenario {

  /** The flooder's address, apart from every visitor's ({@link HttpLoad#CLIENT_ADDRESSES}). */
  static final String FLOODER = "198.51.100.66";

  private static final int LINKS = 2_000;
  private static final int UNKNOWN_PER_SECOND = 200;
  private static final int STATS_PER_SECOND = 60;
  private static final int CREATES_PER_SECOND = 20;
  private static final double P99_GOAL = 2.0;

  /** redirect-web's pools: the redirects' 32, the stats API's default 4, the code listener's 1. */
  private static final int POOLED_CONNECTIONS = 32 + 4 + 1;

  /** The flooder's requests by kind. */
  private final Map<String, HttpLoad> floods = new LinkedHashMap<>();

  private final AtomicLong mostConnections = new AtomicLong();
  private List<String> codes;
  private Histogram quiet;
  private Histogram flooded;

  AbuseScenario() {
    super(
        "abuse",
        "11. One client floods unknown codes, stats and link creation: it gets 404s and 429s,"
            + " visitors keep their 302s and their speed, every click counted");
  }

  /**
   * Limits an operator of a small site might set, so that each flood meets its limit within the
   * fault however short; the defaults are ten times these.
   */
  @Override
  Map<String, String> webEnv() {
    return Map.of(
        "TALLY_LIMIT_UNKNOWN_CODES_PER_MINUTE", "300",
        "TALLY_LIMIT_API_PER_MINUTE", "1200",
        "TALLY_LIMIT_CREATE_PER_MINUTE", "60",
        "TALLY_LIMIT_STATS_PER_MINUTE", "300");
  }

  @Override
  List<String> links(ChaosStack stack) throws Exception {
    codes = stack.createLinks("v", LINKS);
    return codes;
  }

  /**
   * A quiet run as long as the flood will be, to compare the visitors' p99 with; then the flood.
   */
  @Override
  void fault(ChaosStack stack) throws Exception {
    load.latenciesSinceLastAsked();
    Thread.sleep(stack.settings().outage().toMillis());
    quiet = load.latenciesSinceLastAsked();
  }

  @Override
  void whileDown(ChaosStack stack, RunningClickJob job, int webPort, Outcome outcome) {
    if (floods.isEmpty()) {
      flood("unknown codes", 4, UNKNOWN_PER_SECOND, i -> flooder(webPort, "/flood-" + i));
      flood(
          "stats",
          1,
          STATS_PER_SECOND,
          i -> withKey(flooder(webPort, "/api/links/" + codes.get(i % LINKS) + "/stats?from=1h")));
      flood(
          "link creations",
          1,
          CREATES_PER_SECOND,
          i ->
              withKey(flooder(webPort, "/api/links"))
                  .header("Content-Type", "application/json")
                  .POST(BodyPublishers.ofString("{\"url\":\"https://spam.example/" + i + "\"}")));
    }
    String connections =
        "SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE 'redirect-web%'";
    mostConnections.accumulateAndGet(stack.count(connections), Math::max);
  }

  /** Sends the flooder's requests of one kind, {@code perSecond} a second on {@code threads}. */
  private void flood(
      String kind, int threads, int perSecond, IntFunction<HttpRequest.Builder> request) {
    floods.put(kind, new HttpLoad(threads, perSecond, i -> request.apply(i).build(), a -> true));
  }

  private static HttpRequest.Builder flooder(int port, String path) {
    return HttpLoad.to(port, path).header("X-Forwarded-For", FLOODER);
  }

  private static HttpRequest.Builder withKey(HttpRequest.Builder request) {
    return request.header("Authorization", "Bearer " + ChaosStack.API_KEY);
  }

  @Override
  void heal(ChaosStack stack) throws Exception {
    flooded = load.latenciesSinceLastAsked();
    for (HttpLoad flood : floods.values()) {
      flood.close();
    }
  }

  @Override
  void afterLoad(ChaosStack stack, Outcome outcome) {
    Map<Integer, Long> unknown = answers("unknown codes");
    outcome.check(
        "the flooder's unknown codes answered 404, then 429 once over its limit",
        unknown.getOrDefault(404, 0L) > 0
            && unknown.getOrDefault(429, 0L) > 0
            && unknown.keySet().stream().allMatch(s -> s == 404 || s == 429),
        "unknown codes " + unknown);
    for (String kind : List.of("stats", "link creations")) {
      Map<Integer, Long> statuses = answers(kind);
      outcome.check(
          "the flooder's " + kind + " limited (429) after some were served",
          statuses.getOrDefault(429, 0L) > 0
              && statuses.keySet().stream().allMatch(s -> s == 200 || s == 201 || s == 429),
          kind + " " + statuses);
    }
    double quietP99 = quiet.getValueAtPercentile(99) / 1e6;
    double floodP99 = flooded.getValueAtPercentile(99) / 1e6;
    outcome.check(
        "visitors' p99 during the flood within " + P99_GOAL + "x of a quiet run as long",
        floodP99 <= P99_GOAL * quietP99,
        String.format(
            Locale.ROOT,
            "p99 %.1f ms flooded, %.1f ms quiet (%.2fx), %d and %d redirects",
            floodP99,
            quietP99,
            floodP99 / quietP99,
            flooded.getTotalCount(),
            quiet.getTotalCount()));
    outcome.check(
        "PostgreSQL connections of redirect-web within its pools",
        mostConnections.get() <= POOLED_CONNECTIONS,
        "at most " + mostConnections.get() + " of " + POOLED_CONNECTIONS);
  }

  private Map<Integer, Long> answers(String kind) {
    return floods.containsKey(kind) ? floods.get(kind).byStatus() : Map.of();
  }
}
