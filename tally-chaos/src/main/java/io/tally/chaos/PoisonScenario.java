package io.tally.chaos;

import static java.util.stream.Collectors.joining;

import com.fasterxml.jackson.databind.JsonNode;
import io.tally.chaos.PoisonRecords.Poison;
import io.tally.chaos.PoisonRequests.Request;
import io.tally.event.ClickEvent;
import io.tally.event.ClickEventCodec;
import io.tally.event.Decoded;
import io.tally.local.ClickJobProcess;
import io.tally.redirect.RedirectWebServer;
import io.tally.testing.ClickOracle;
import io.tally.testing.ClickStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * Scenario 5: poison from both ends while another link is clicked throughout. Straight onto the
 * click topic, every kind of poison record ({@link PoisonRecords}) spread through a stream of valid
 * clicks: records that are not events, events that parse but break a field's bound, and events
 * exactly at a bound. Through redirect-web, requests whose {@code Referer} or {@code User-Agent} a
 * client made up ({@link PoisonRequests}), each kind to a link of its own. Meanwhile another link
 * is clicked through redirect-web every {@link #STEADY_PERIOD} ({@link SteadyClicks}).
 *
 * <p>The claims: each poison record is a dead letter with its reason and its bytes, or, at a bound,
 * a click counted on its link, and no other dead letter appears; every poison request is answered
 * 302 or refused with a 4xx, and every 302 is counted on its link; each click on the other link
 * shows in {@code click_counts} within {@link #VISIBLE_WITHIN}; the job never restarts; and every
 * table then equals the truth (drift 0): the valid stream, the records at a bound, and the clicks
 * redirect-web published, as the click topic holds them.
 *
 * <p>Every click is stamped now, the stream's as redirect-web stamps its own: clicks of an earlier
 * hour sent after the redirects' would be late, and the visibility claim is about live clicks.
 */
final class PoisonScenario extends Scenario {

  static final String STEADY = "steady";
  private static final Duration VISIBLE_WITHIN = Duration.ofSeconds(5);
  private static final Duration STEADY_PERIOD = Duration.ofMillis(300);

  /** Each poison request is sent this many times over the run, early, midway and late. */
  private static final int REQUEST_ROUNDS = 3;

  PoisonScenario() {
    super(
        "poison",
        "5. poison on the topic and through HTTP while another link is clicked: each"
            + " dead-lettered with its reason or counted, the other link visible within 5 s, 0"
            + " restarts, drift 0");
  }

  @Override
  public Outcome run(ChaosStack stack) throws Exception {
    Outcome outcome = new Outcome(name());
    ChaosSettings settings = stack.settings();
    List<Request> requests = PoisonRequests.all(5);
    Set<String> webCodes = new HashSet<>(Set.of(STEADY));
    requests.forEach(r -> webCodes.add(r.code()));
    stack.createLinks(List.copyOf(webCodes));
    ClickJobProcess job = stack.startJob();
    KafkaProducer<String, byte[]> producer = stack.producer();

    long now = System.currentTimeMillis();
    long events = settings.validEvents();
    Duration length = settings.outage();
    ClickOracle truth = new ClickOracle();
    ClickStream stream =
        new ClickStream(truth::add, "p", 50, now, length.toMillis(), events, 0.05, 5);
    List<Poison> poisons = PoisonRecords.all(now, now);
    Map<String, Map<Integer, Long>> answers = new LinkedHashMap<>();
    Visibility steadyShown;
    Map<String, Double> metrics;
    try (RedirectWebServer web = stack.startRedirectWeb(Map.of())) {
      web.awaitClickTopic(Duration.ofSeconds(30));
      // The job's first click waits for its operators to warm up, which is not what this measures.
      long warmUp = System.nanoTime();
      outcome.redirects.merge(
          RawHttp.get(web.port(), "/" + STEADY, RawHttp.BROWSER), 1L, Long::sum);
      boolean up = ChaosStack.await(() -> stack.clicks(STEADY) >= 1, settings.settle());
      String took = String.format(Locale.ROOT, "%.1f s", (System.nanoTime() - warmUp) / 1e9);
      String shown = up ? "shown" : "not shown";
      outcome.note(
          "first click on " + STEADY + " " + shown + " after " + took + " (the job warming up)");

      try (SteadyClicks steady =
          new SteadyClicks(
              stack, web.port(), STEADY, STEADY_PERIOD, Math.max(0, stack.clicks(STEADY)))) {
        List<Poison> poisonsLeft = new ArrayList<>(poisons);
        List<Request> requestsLeft = new ArrayList<>();
        for (int round = 0; round < REQUEST_ROUNDS; round++) {
          requestsLeft.addAll(requests);
        }
        // Spread through the stream: a poison record and a poison request at each step.
        long step = Math.max(1, events / (Math.max(poisonsLeft.size(), requestsLeft.size()) + 1));
        StreamSender.sendAll(
            producer,
            stream,
            (int) (events * 1000 / length.toMillis()),
            (click, sent) -> {
              if (sent % step != 0 || sent >= events) {
                return;
              }
              if (!poisonsLeft.isEmpty()) {
                send(producer, poisonsLeft.remove(0), now);
              }
              if (!requestsLeft.isEmpty()) {
                request(web.port(), requestsLeft.remove(0), answers);
              }
            });
        poisonsLeft.forEach(p -> send(producer, p, now));
        requestsLeft.forEach(r -> request(web.port(), r, answers));
        producer.flush();
        steady.stop(Duration.ofSeconds(30));
        steady.byStatus().forEach((status, n) -> outcome.redirects.merge(status, n, Long::sum));
        steadyShown = steady.visibility();
      }
      metrics = OutageScenario.settledMetrics(web.port());
    }
    answers.values().forEach(a -> a.forEach((s, n) -> outcome.redirects.merge(s, n, Long::sum)));
    OutageScenario.readProducer(metrics, outcome);
    long answered = outcome.redirects.values().stream().mapToLong(Long::longValue).sum();
    outcome.clicksSent = stream.delivered() + poisons.size() + answered;

    // The truth: the valid stream, the records at a bound, and what redirect-web published.
    poisons.stream().filter(Poison::isCounted).forEach(p -> truth.add(p.counted()));
    Map<String, List<ClickEvent>> published = published(stack, webCodes);
    published.getOrDefault(STEADY, List.of()).forEach(truth::add);
    for (Request r : requests) {
      published.getOrDefault(r.code(), List.of()).forEach(c -> truth.add(c, r.client()));
    }
    Map<String, Long> drift = stack.awaitDriftZero(truth, settings.settle());

    int deadLetterKinds = (int) poisons.stream().filter(p -> !p.isCounted()).count();
    DeadLetters letters = stack.awaitDeadLetters(l -> l.all().size() >= deadLetterKinds);
    outcome.deadLetters.putAll(letters.byReason());
    checkPoisonRecords(stack, poisons, letters, outcome);
    checkPoisonRequests(stack, requests, answers, published, outcome);
    long found = outcome.redirects.getOrDefault(302, 0L);
    outcome.check(
        "every 302 published and delivered",
        outcome.producerSent == found && outcome.producerDelivered == found,
        outcome.producerSent
            + " published, "
            + outcome.producerDelivered
            + " delivered, "
            + found
            + " answered 302");
    outcome.check(
        "each click on " + STEADY + " visible within " + VISIBLE_WITHIN.toSeconds() + " s",
        steadyShown.sent() > 0 && steadyShown.slowest() <= VISIBLE_WITHIN.toMillis(),
        steadyShown.describe());
    outcome.restarts = job.restarts();
    if (outcome.restarts > 0) {
      outcome.note("the job's exceptions: " + exceptions(job) + "; log " + job.logFile());
    }
    outcome.check("0 job restarts", outcome.restarts == 0, outcome.restarts + " restarts");
    outcome.checkDrift("every table equals the truth (drift 0)", drift);
    return outcome;
  }

  /**
   * A poison record stamped {@code ts}, the time its events carry, as every producer of click
   * records stamps them ({@code ClickRecords}): the job counts a click in the minute of its
   * record's timestamp.
   */
  private static void send(KafkaProducer<String, byte[]> producer, Poison p, long ts) {
    producer.send(new ProducerRecord<>(ChaosStack.CLICKS, null, ts, "poison", p.value()));
  }

  private static void request(int port, Request r, Map<String, Map<Integer, Long>> answers) {
    int status = RawHttp.get(port, "/" + r.code(), r.headers());
    answers.computeIfAbsent(r.kind(), k -> new TreeMap<>()).merge(status, 1L, Long::sum);
  }

  /**
   * Each dead-letter kind in the DLQ with its reason and its bytes, each record at a bound counted
   * once on its link and in no letter, and no letter but theirs.
   */
  private static void checkPoisonRecords(
      ChaosStack stack, List<Poison> poisons, DeadLetters letters, Outcome outcome) {
    List<String> wrong = new ArrayList<>();
    List<String> uncounted = new ArrayList<>();
    List<String> expectedRaw = new ArrayList<>();
    for (Poison p : poisons) {
      String raw = raw(p.value());
      List<String> reasons = letters.reasonsOf(raw);
      if (p.isCounted()) {
        long clicks = stack.clicks(p.counted().code());
        if (clicks != 1 || !reasons.isEmpty()) {
          String lettered = reasons.isEmpty() ? "" : ", DLQ " + reasons;
          uncounted.add(p.kind() + " → " + clicks + " clicks" + lettered);
        }
        continue;
      }
      expectedRaw.add(raw);
      if (reasons.isEmpty() || !reasons.stream().allMatch(r -> r.equals(p.reason().label()))) {
        String got = reasons.isEmpty() ? "not in the DLQ" : reasons.toString();
        wrong.add(p.kind() + " → " + got + ", expected " + p.reason().label());
      }
    }
    int deadLetterKinds = expectedRaw.size();
    int counted = poisons.size() - deadLetterKinds;
    outcome.check(
        deadLetterKinds + " poison kinds each in the DLQ with its reason",
        wrong.isEmpty(),
        allBut(deadLetterKinds, wrong));
    outcome.check(
        counted + " records at a bound each counted once on its link",
        uncounted.isEmpty(),
        allBut(counted, uncounted));
    List<JsonNode> others = letters.except(expectedRaw);
    String firstFive = others.stream().limit(5).map(PoisonScenario::letter).collect(joining("; "));
    outcome.check(
        "no other dead letter",
        others.isEmpty(),
        others.isEmpty() ? "0" : others.size() + ": " + firstFive);
  }

  /** How many of {@code total} kinds held, and what each that failed got instead. */
  private static String allBut(int total, List<String> failed) {
    String failures = failed.isEmpty() ? "" : "; " + String.join("; ", failed);
    return (total - failed.size()) + "/" + total + failures;
  }

  /**
   * Every poison request answered 302 or refused with a 4xx, and each link's 302s all counted;
   * notes what each kind got and what redirect-web published for it.
   */
  private static void checkPoisonRequests(
      ChaosStack stack,
      List<Request> requests,
      Map<String, Map<Integer, Long>> answers,
      Map<String, List<ClickEvent>> published,
      Outcome outcome) {
    List<String> badAnswers = new ArrayList<>();
    List<String> uncounted = new ArrayList<>();
    long redirects = 0;
    for (Request r : requests) {
      Map<Integer, Long> got = answers.getOrDefault(r.kind(), Map.of());
      long found = got.getOrDefault(302, 0L);
      redirects += found;
      if (got.keySet().stream().anyMatch(s -> s != 302 && (s < 400 || s > 499))) {
        badAnswers.add(r.kind() + " → " + got);
      }
      long clicks = stack.clicks(r.code());
      if (clicks != found) {
        uncounted.add(r.kind() + " → " + found + " answered 302, " + clicks + " counted");
      }
      List<ClickEvent> clicksOf = published.getOrDefault(r.code(), List.of());
      outcome.note(r.kind() + ": " + got + published(r, clicksOf));
    }
    outcome.check(
        "every poison request answered 302 or refused with a 4xx",
        badAnswers.isEmpty(),
        badAnswers.isEmpty()
            ? requests.size() + " kinds × " + REQUEST_ROUNDS
            : String.join("; ", badAnswers));
    outcome.check(
        "each poison request's 302 counted on its link",
        uncounted.isEmpty(),
        uncounted.isEmpty()
            ? redirects + " clicks on " + requests.size() + " links"
            : String.join("; ", uncounted));
  }

  /** What redirect-web made of a kind's header, as its published events carry it. */
  private static String published(Request r, List<ClickEvent> clicks) {
    if (clicks.isEmpty()) {
      return "";
    }
    if (r.headers().containsKey("Referer")) {
      return ", referrer " + distinct(clicks, c -> shown(c.referrerDomain()));
    }
    return ", ua "
        + distinct(clicks, c -> c.userAgent().length() + " chars, " + replaced(c) + " U+FFFD");
  }

  private static Set<String> distinct(List<ClickEvent> clicks, Function<ClickEvent, String> what) {
    return clicks.stream().map(what).collect(Collectors.toCollection(TreeSet::new));
  }

  /** How many characters of the agent redirect-web replaced, as not UTF-8. */
  private static long replaced(ClickEvent click) {
    return click.userAgent().chars().filter(ch -> ch == '\uFFFD').count();
  }

  private static String shown(String text) {
    if (text.isEmpty()) {
      return "none";
    }
    return text.length() <= 40 ? text : text.substring(0, 20) + "… (" + text.length() + " chars)";
  }

  /** The click topic's valid events on these links, by link: what redirect-web published. */
  private static Map<String, List<ClickEvent>> published(ChaosStack stack, Set<String> codes) {
    Map<String, List<ClickEvent>> byCode = new TreeMap<>();
    for (ConsumerRecord<byte[], byte[]> r : stack.readAll(ChaosStack.CLICKS)) {
      if (ClickEventCodec.decode(r.value(), r.timestamp()) instanceof Decoded.Valid valid
          && codes.contains(valid.event().code())) {
        byCode.computeIfAbsent(valid.event().code(), c -> new ArrayList<>()).add(valid.event());
      }
    }
    return byCode;
  }

  /**
   * The bytes a record's letter keeps, in base64: an oversized record's first bytes only; its
   * source offset leads to the rest. {@code null} for a tombstone.
   */
  private static String raw(byte[] value) {
    if (value == null) {
      return null;
    }
    byte[] kept = Arrays.copyOf(value, Math.min(value.length, ClickEventCodec.MAX_EVENT_BYTES));
    return Base64.getEncoder().encodeToString(kept);
  }

  private static String letter(JsonNode letter) {
    String detail = letter.path("detail").asText();
    String row = letter.path("row").isMissingNode() ? "" : " row " + letter.path("row");
    String text = letter.path("reason").asText() + " (" + detail + ")" + row;
    return text.length() <= 300 ? text : text.substring(0, 300) + "…";
  }

  /** Flink's newest exceptions of the job, for the report when it restarted. */
  private static String exceptions(ClickJobProcess job) {
    try {
      List<String> seen = new ArrayList<>();
      JsonNode history = job.rest().get("/jobs/" + job.jobId() + "/exceptions?maxExceptions=3");
      for (JsonNode entry : history.path("exceptionHistory").path("entries")) {
        String trace = entry.path("stacktrace").asText("");
        int newline = trace.indexOf('\n');
        seen.add(newline < 0 ? trace : trace.substring(0, newline));
      }
      return seen.isEmpty() ? "none reported" : String.join(" | ", seen);
    } catch (RuntimeException e) {
      return "not readable (" + e.getMessage() + ")";
    }
  }
}
