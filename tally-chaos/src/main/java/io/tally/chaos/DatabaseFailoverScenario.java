package io.tally.chaos;

import io.tally.embedded.ReplicatedPostgres;
import io.tally.local.LocalServices.Topology;
import io.tally.local.RunningClickJob;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Locale;

/**
 * Scenario 15: PostgreSQL's primary is killed with SIGKILL under redirect load and, after the
 * outage (the time a failover manager takes to decide), its synchronous standby is promoted. Every
 * client reaches the new primary through the same multi-host URL: redirects answer 302 from
 * redirect-web's link cache meanwhile, new links can be made afterwards, the click job's writer
 * reconnects without a restart loop, and the counts end exact, since no commit was acknowledged
 * before the standby had it (the other claims are {@link OutageScenario}'s).
 */
final class DatabaseFailoverScenario extends OutageScenario {

  /**
   * Restarts once a primary is back: one may already be waiting out its backoff at the promotion;
   * more would be a loop. While there is no primary the job restarts with exponential backoff.
   */
  private static final long MOST_RESTARTS_AFTER_PROMOTION = 1;

  private int webPort;
  private RunningClickJob job;
  private long restartsAtPromotion;
  private int linkStatus;
  private Duration linkAfter = Duration.ZERO;

  DatabaseFailoverScenario() {
    super(
        "database-failover",
        "15. PostgreSQL primary killed, standby promoted: 302s from the cache, writers reconnect,"
            + " counts exact");
  }

  @Override
  public Topology topology() {
    return new Topology(1, true);
  }

  @Override
  void fault(ChaosStack stack) throws Exception {
    postgres(stack).killPrimary();
  }

  @Override
  void whileDown(ChaosStack stack, RunningClickJob job, int webPort, Outcome outcome) {
    this.webPort = webPort;
    this.job = job;
  }

  /** Promotes the standby, then makes a link, as a user would once the database is back. */
  @Override
  void heal(ChaosStack stack) throws Exception {
    postgres(stack).promoteStandby();
    restartsAtPromotion = job.restarts();
    HttpClient http = HttpClient.newHttpClient();
    HttpRequest create =
        HttpRequest.newBuilder(URI.create("http://localhost:" + webPort + "/api/links"))
            .header("Authorization", "Bearer " + ChaosStack.API_KEY)
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString("{\"url\":\"https://example.com/after\"}"))
            .timeout(Duration.ofSeconds(10))
            .build();
    long promoted = System.nanoTime();
    linkStatus =
        ChaosStack.poll(
            () -> http.send(create, HttpResponse.BodyHandlers.discarding()).statusCode(),
            status -> status == 201,
            Duration.ofSeconds(60));
    linkAfter = Duration.ofNanos(System.nanoTime() - promoted);
  }

  @Override
  void afterLoad(ChaosStack stack, Outcome outcome) {
    outcome.check(
        "redirect-web writes to the promoted primary",
        linkStatus == 201,
        String.format(
            Locale.ROOT,
            "a new link answered %d, %.1f s after the promotion",
            linkStatus,
            linkAfter.toMillis() / 1e3));
  }

  @Override
  public Outcome run(ChaosStack stack) throws Exception {
    Outcome outcome = super.run(stack);
    long afterPromotion = outcome.restarts - restartsAtPromotion;
    outcome.check(
        "the click job reconnected without a restart loop",
        afterPromotion <= MOST_RESTARTS_AFTER_PROMOTION,
        String.format(
            Locale.ROOT,
            "%d restarts after the promotion (at most %d); %d while no primary answered, backing"
                + " off",
            afterPromotion,
            MOST_RESTARTS_AFTER_PROMOTION,
            restartsAtPromotion));
    return outcome;
  }

  private static ReplicatedPostgres postgres(ChaosStack stack) {
    return stack.services().replicatedPostgres().orElseThrow();
  }
}
