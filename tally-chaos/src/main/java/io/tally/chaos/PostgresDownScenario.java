package io.tally.chaos;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.TreeMap;

/**
 * Scenario 3: PostgreSQL is paused (SIGSTOP on all its processes) under redirect load. Redirects to known
 * links must keep answering 302 from redirect-web's link cache; the click job cannot write, so it must
 * back off, with backpressure visible in Flink's web UI, and count every click once PostgreSQL is back
 * (the other claims are {@link OutageScenario}'s).
 */
final class PostgresDownScenario extends OutageScenario {

  private PostgresPause pause;
  private final TreeMap<String, Integer> backpressure = new TreeMap<>();

  @Override
  public String name() {
    return "postgres-down";
  }

  @Override
  public String title() {
    return "3. PostgreSQL paused under redirect load: redirects answer 302, the job backs off and loses nothing";
  }

  @Override
  Duration length(ChaosSettings settings) {
    return settings.outage();
  }

  @Override
  void fault(ChaosStack stack) throws Exception {
    pause = new PostgresPause(stack.services().postmasterPid());
    pause.pause();
  }

  @Override
  void whileDown(ChaosStack stack, JobProcess job, Outcome outcome) {
    try {
      for (JsonNode vertex : job.rest().get("/jobs/" + job.jobId()).path("vertices")) {
        String level = job.rest().get("/jobs/" + job.jobId() + "/vertices/" + vertex.path("id").asText() + "/backpressure")
            .path("backpressureLevel").asText("");
        if (level.equals("high")) {
          backpressure.merge(vertex.path("name").asText(), 1, Integer::sum);
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
    outcome.check("backpressure visible in the web UI while PostgreSQL was paused", !backpressure.isEmpty(),
        backpressure.isEmpty() ? "no vertex sampled as high" : "high in " + backpressure.keySet());
    return outcome;
  }
}
