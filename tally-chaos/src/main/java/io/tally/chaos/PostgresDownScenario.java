package io.tally.chaos;

import com.fasterxml.jackson.databind.JsonNode;
import io.tally.counting.records.DeadLetter;
import io.tally.embedded.PostgresPause;
import io.tally.local.RunningClickJob;
import java.time.Duration;
import java.util.Set;
import java.util.TreeSet;

/**
 * Scenario 3: PostgreSQL is paused (SIGSTOP on all its processes) under redirect load. Redirects to
 * known links must keep answering 302 from redirect-web's link cache; the click job cannot write,
 * so it must back off, with backpressure visible in Flink's web UI, and count every click once
 * PostgreSQL is back (the other claims are {@link OutageScenario}'s).
 */
final class PostgresDownScenario extends OutageScenario {

  private PostgresPause pause;
  private final Set<String> backpressured = new TreeSet<>();
  private final Set<String> stalled = new TreeSet<>();

  PostgresDownScenario() {
    super(
        "postgres-down",
        "3. PostgreSQL paused under redirect load: redirects answer 302, the job backs off and"
            + " loses nothing");
  }

  @Override
  Duration length(ChaosSettings settings) {
    return settings.postgresOutage();
  }

  @Override
  void fault(ChaosStack stack) throws Exception {
    pause = PostgresPause.of(stack.services().dir().resolve("pg"));
    pause.pause();
  }

  @Override
  void whileDown(ChaosStack stack, RunningClickJob job, int webPort, Outcome outcome) {
    try {
      for (JsonNode vertex : job.rest().get("/jobs/" + job.jobId()).path("vertices")) {
        String id = vertex.path("id").asText();
        JsonNode sample =
            job.rest().get("/jobs/" + job.jobId() + "/vertices/" + id + "/backpressure");
        String name = vertex.path("name").asText();
        if (sample.path("backpressureLevel").asText("").equals("high")) {
          backpressured.add(name);
        }
        for (JsonNode subtask : sample.path("subtasks")) {
          if (subtask.path("busyRatio").asDouble() >= 0.9) {
            stalled.add(name);
          }
        }
      }
    } catch (RuntimeException e) {
      // The UI may be slow to answer while the job is stuck; the next sample may do.
    }
  }

  @Override
  void heal(ChaosStack stack) throws Exception {
    pause.resume();
  }

  @Override
  public Outcome run(ChaosStack stack) throws Exception {
    Outcome outcome = super.run(stack);
    // A stalled JDBC write shows as a sink 100% busy; upstream backpressure follows only once the
    // rows waiting for it fill the network buffers, which a minute-aggregating job at this rate may
    // never do.
    outcome.check(
        "the stall visible in the web UI while PostgreSQL was paused",
        !backpressured.isEmpty() || !stalled.isEmpty(),
        "backpressure high in "
            + (backpressured.isEmpty() ? "no vertex" : backpressured)
            + "; ≥90% busy: "
            + (stalled.isEmpty() ? "no vertex" : stalled));
    // Clicks that waited in Kafka behind the stalled job for longer than the allowed lateness would
    // be late had the watermark moved on with the wall clock while the job could not read.
    long late = outcome.deadLetters.getOrDefault(DeadLetter.LATE, 0L);
    outcome.check("no click late after the outage", late == 0, late + " dead-lettered as late");
    return outcome;
  }
}
