package io.tally.chaos;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/**
 * Scenario 2: the only Kafka broker stops under redirect load and comes back after the outage.
 * Redirects must not notice; clicks that find the producer's buffer full are dropped and counted;
 * sending resumes by itself (the claims are {@link OutageScenario}'s).
 */
final class BrokerDownScenario extends OutageScenario {

  @Override
  public String name() {
    return "broker-down";
  }

  @Override
  public String title() {
    return "2. Kafka broker down under redirect load: 100% answered 302, drops counted exactly,"
        + " sending resumes";
  }

  /**
   * A 1 MiB producer buffer instead of the default 8 MiB, so that the outage outlasts it and clicks
   * are dropped: the scenario is about counting drops exactly, which needs some.
   */
  @Override
  Map<String, String> webEnv() {
    Map<String, String> env = new HashMap<>(super.webEnv());
    env.put("TALLY_KAFKA_BUFFER_BYTES", String.valueOf(1 << 20));
    return env;
  }

  @Override
  Duration length(ChaosSettings settings) {
    return settings.outage();
  }

  @Override
  void fault(ChaosStack stack) {
    stack.services().kafka().stop();
  }

  @Override
  void heal(ChaosStack stack) {
    stack.services().kafka().restart();
  }
}
