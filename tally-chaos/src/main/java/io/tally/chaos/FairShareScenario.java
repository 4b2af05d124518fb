package io.tally.chaos;

import io.tally.local.RunningClickJob;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.IntFunction;
import java.util.function.Predicate;
import org.HdrHistogram.Histogram;

/**
 * Scenario 13: no one client can slow everyone's counts, starve the stats API or pose as many
 * people. One client address follows one existing link in a loop with a fresh user agent each time
 * (build numbers only), and one read key asks for the heaviest stats from many threads at once,
 * while visitors from other addresses follow links, one link is clicked every two seconds and timed
 * until it shows, and another key reads a chart twice a second. The timed clicks show within 5 s
 * all along, the other key's charts are all answered, the heavy key meets 429, and the flood is
 * counted whole: a minute's clicks and the bucket's refill as people, the rest as bot clicks of
 * kind {@code burst} (the other claims are {@link OutageScenario}'s).
 */
final class FairShareScenario extends OutageScenario {

  /** The flooder's address, apart from every visitor's ({@link HttpLoad#CLIENT_ADDRESSES}). */
  static final String FLOODER = "198.51.100.77";

  /** The addresses of the heavy key's client and of the charts' client, each limited apart. */
  static final String HEAVY_READER = "198.51.100.88";

  static final String CHART_READER = "198.51.100.99";

  private static final String CHART_KEY = "chaos-chart-key-0123456789abcdefghijk";
  private static final String CHARTED_CODE = "h0007";
  private static final String FLOOD_CODE = "fair-flood";
  private static final String WATCHED_CODE = "fair-watched";
  private static final int HEAVY_LINKS = 2_000;
  private static final int DAYS = 366;
  private static final int FLOOD_PER_SECOND = 200;
  private static final int HEAVY_THREADS = 8;
  private static final Duration VISIBLE_WITHIN = Duration.ofSeconds(5);
  private static final String[] HEAVY = {
    "/api/top?from=366d&limit=1000", "/api/links?q=articles%2Fh01&limit=200"
  };

  /** The fresh agent of the flood's {@code i}th request: a browser's, with a build of its own. */
  static String freshAgent(int i) {
    return "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko)"
        + " Chrome/131.0."
        + (1 + i / 1000)
        + "."
        + (1 + i % 1000)
        + " Safari/537.36";
  }

  private final List<HttpLoad> loads = new ArrayList<>();
  private HttpLoad flood;
  private HttpLoad heavy;
  private HttpLoad charts;
  private SteadyClicks watched;
  private long floodStart;
  private long floodEnd;

  FairShareScenario() {
    super(
        "fair-share",
        "13. One address floods a link with fresh agents and one key the heaviest stats: other"
            + " clicks show within 5 s, other charts answer, the flood counted as burst");
  }

  /** A second, read-only key for the charts that must keep their answers. */
  @Override
  Map<String, String> webEnv() {
    return Map.of("TALLY_API_KEYS", ChaosStack.API_KEY + ",read:" + CHART_KEY);
  }

  /** The visitors' 50 links; besides them the flooded and the timed link, and a year of rows. */
  @Override
  List<String> links(ChaosStack stack) throws Exception {
    stack.createLinks(List.of(FLOOD_CODE, WATCHED_CODE));
    stack.createLinks("h", HEAVY_LINKS);
    stack.addDayRows("h", DAYS);
    return stack.createLinks("f", 50);
  }

  @Override
  void whileDown(ChaosStack stack, RunningClickJob job, int webPort, Outcome outcome) {
    if (flood != null) {
      return;
    }
    floodStart = System.nanoTime();
    flood =
        start(
            FLOOD_PER_SECOND / 50,
            FLOOD_PER_SECOND,
            i ->
                HttpLoad.to(webPort, "/" + FLOOD_CODE)
                    .header("X-Forwarded-For", FLOODER)
                    .header("User-Agent", freshAgent(i))
                    .build(),
            answer -> answer.statusCode() == 302);
    heavy =
        start(
            HEAVY_THREADS,
            0,
            i ->
                HttpLoad.to(webPort, HEAVY[i % HEAVY.length])
                    .header("X-Forwarded-For", HEAVY_READER)
                    .header("Authorization", "Bearer " + ChaosStack.API_KEY)
                    .timeout(Duration.ofSeconds(30))
                    .build(),
            answer -> answer.statusCode() == 200 || refusedForNow(answer));
    charts =
        start(
            1,
            2,
            i ->
                HttpLoad.to(webPort, "/api/links/" + CHARTED_CODE + "/stats?from=30d")
                    .header("X-Forwarded-For", CHART_READER)
                    .header("Authorization", "Bearer " + CHART_KEY)
                    .build(),
            answer -> answer.statusCode() == 200);
    watched = new SteadyClicks(stack, webPort, WATCHED_CODE, Duration.ofSeconds(2), 0);
  }

  private HttpLoad start(
      int threads,
      int perSecond,
      IntFunction<HttpRequest> request,
      Predicate<HttpResponse<String>> expected) {
    HttpLoad load = new HttpLoad(threads, perSecond, request, expected);
    loads.add(load);
    return load;
  }

  private static boolean refusedForNow(HttpResponse<String> answer) {
    return answer.statusCode() == 429 && answer.headers().firstValue("Retry-After").isPresent();
  }

  @Override
  void heal(ChaosStack stack) throws Exception {
    floodEnd = System.nanoTime();
    for (HttpLoad load : loads) {
      load.close();
    }
    if (watched != null) {
      watched.stop(Duration.ofSeconds(60));
    }
  }

  /** The flood's and the timed link's redirects, besides the visitors'. */
  @Override
  Map<Integer, Long> otherRedirects() {
    Map<Integer, Long> answers = new TreeMap<>();
    if (flood != null) {
      flood.byStatus().forEach((status, n) -> answers.merge(status, n, Long::sum));
      watched.byStatus().forEach((status, n) -> answers.merge(status, n, Long::sum));
    }
    return answers;
  }

  @Override
  void afterLoad(ChaosStack stack, Outcome outcome) throws Exception {
    if (flood == null) {
      outcome.check("the flood ran", false, "the fault ended before it started");
      return;
    }
    Visibility seen = watched.visibility();
    outcome.check(
        "the timed link's clicks shown within " + VISIBLE_WITHIN.toSeconds() + " s all along",
        seen.allVisible() && seen.slowest() <= VISIBLE_WITHIN.toMillis(),
        seen.describe() + ", answers " + watched.byStatus());

    Histogram chartLatency = charts.latenciesSinceLastAsked();
    outcome.check(
        "the other key's charts all answered 200",
        charts.unexpected().isEmpty() && charts.byStatus().getOrDefault(200, 0L) > 0,
        String.format(
            Locale.ROOT,
            "%s, p99 %.1f ms%s",
            charts.byStatus(),
            chartLatency.getValueAtPercentile(99) / 1e6,
            charts.unexpected().isEmpty() ? "" : ", first other: " + charts.unexpected().get(0)));
    Map<Integer, Long> heavyAnswers = heavy.byStatus();
    outcome.check(
        "the heavy key answered 200 or 429, and met 429",
        heavy.unexpected().isEmpty() && heavyAnswers.getOrDefault(429, 0L) > 0,
        "heavy key " + heavyAnswers);

    Map<Integer, Long> floodAnswers = flood.byStatus();
    long followed = floodAnswers.getOrDefault(302, 0L);
    outcome.check(
        "the flood answered 302 throughout",
        floodAnswers.keySet().equals(Set.of(302)),
        "flood " + floodAnswers);
    long counted =
        ChaosStack.poll(
            () -> stack.clicks(FLOOD_CODE), n -> n >= followed, stack.settings().settle());
    long people =
        stack.count("SELECT COALESCE(sum(clicks), 0) FROM click_counts WHERE code = ?", FLOOD_CODE);
    long bursts =
        stack.count(
            "SELECT COALESCE(sum(clicks), 0) FROM click_dimensions_hourly WHERE code = ? AND"
                + " dimension = 'bot_kind' AND value = 'burst'",
            FLOOD_CODE);
    double minutes = (floodEnd - floodStart) / 60e9;
    long allowed = (long) Math.ceil(60 * (1 + minutes)) + 1;
    outcome.check(
        "the flood counted whole: at most a minute's clicks and the refill as people, the rest as"
            + " burst",
        counted == followed && people <= allowed && people + bursts == counted,
        String.format(
            Locale.ROOT,
            "%d followed, %d counted: %d people (allowed %d in %.1f min), %d burst",
            followed,
            counted,
            people,
            allowed,
            minutes,
            bursts));
  }
}
