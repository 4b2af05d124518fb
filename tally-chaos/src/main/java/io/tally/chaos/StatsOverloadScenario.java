package io.tally.chaos;

import io.tally.local.RunningClickJob;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * Scenario 9: 64 clients ask the stats API for what scans the most (the top links of a year over
 * 5,000 links with a year of day rows, a search over every link's URL) while redirects to those
 * links, most of them not yet cached, go on. The read side has connections of its own: every
 * redirect is answered 302 and counted, and every stats request is answered 200 or, once its key or
 * the read side is at its limits, 429 or 503 (the other claims are {@link OutageScenario}'s).
 */
final class StatsOverloadScenario extends OutageScenario {

  private static final int LINKS = 5_000;
  private static final int DAYS = 366;
  private static final int CLIENTS = 64;
  private static final String[] HEAVY = {
    "/api/top?from=366d&limit=1000",
    "/api/links?q=articles%2Fs4&limit=200",
    "/api/links?limit=200",
    "/api/top?from=300d&to=1d&limit=100"
  };

  private HttpLoad clients;

  StatsOverloadScenario() {
    super(
        "stats-overload",
        "9. 64 clients on the heaviest stats reads during redirects: redirects answer 302, every"
            + " click counted");
  }

  /**
   * The rate limits off: this is the read side's own protection under load, which limits per key
   * would spare it (scenario 11, abuse, has the limits).
   */
  @Override
  Map<String, String> webEnv() {
    return Map.of("TALLY_LIMIT_STATS_PER_MINUTE", "0", "TALLY_LIMIT_API_PER_MINUTE", "0");
  }

  @Override
  List<String> links(ChaosStack stack) throws Exception {
    List<String> codes = stack.createLinks("s", LINKS);
    stack.addDayRows("s", DAYS);
    return codes;
  }

  /** Each client asks for one heavy read after another; busy is 503 with a Retry-After. */
  @Override
  void whileDown(ChaosStack stack, RunningClickJob job, int webPort, Outcome outcome) {
    if (clients == null) {
      clients =
          new HttpLoad(
              CLIENTS,
              0,
              i ->
                  HttpLoad.to(webPort, HEAVY[i % HEAVY.length])
                      .header("Authorization", "Bearer " + ChaosStack.API_KEY)
                      .timeout(Duration.ofSeconds(30))
                      .build(),
              answer ->
                  answer.statusCode() == 200
                      || (answer.statusCode() == 503 || answer.statusCode() == 429)
                          && answer.headers().firstValue("Retry-After").isPresent());
    }
  }

  @Override
  void heal(ChaosStack stack) throws Exception {
    if (clients != null) {
      clients.close();
    }
  }

  @Override
  void afterLoad(ChaosStack stack, Outcome outcome) {
    Map<Integer, Long> byStatus = clients == null ? Map.of() : clients.byStatus();
    List<String> unexpected = clients == null ? List.of() : clients.unexpected();
    outcome.check(
        "every stats request answered 200, or 429 or 503 with Retry-After when busy",
        unexpected.isEmpty(),
        unexpected.isEmpty()
            ? "stats answers " + byStatus
            : unexpected.size() + " others, first: " + unexpected.get(0));
    outcome.check(
        "the read side was at its limits (some stats requests answered 429 or 503)",
        byStatus.getOrDefault(503, 0L) + byStatus.getOrDefault(429, 0L) > 0,
        "stats answers " + byStatus);
  }
}
