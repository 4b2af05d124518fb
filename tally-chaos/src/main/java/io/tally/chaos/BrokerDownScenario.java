package io.tally.chaos;

import java.util.Map;

/**
 * Scenario 2: the only Kafka broker stops under redirect load and comes back after the outage.
 * Redirects must not notice; clicks that find the producer's buffer full are dropped and counted;
 * sending resumes by itself (the claims are {@link OutageScenario}'s).
 */
final class BrokerDownScenario extends OutageScenario {

  BrokerDownScenario() {
    super(
        "broker-down",
        "2. Kafka broker down under redirect load: 100% answered 302, drops counted exactly,"
            + " sending resumes");
  }

  /**
   * A 1 MiB producer buffer instead of the default 8 MiB, so that the outage outlasts it and clicks
   * are dropped: the scenario is about counting drops exactly, which needs some.
   */
  @Override
  Map<String, String> webEnv() {
    return Map.of("TALLY_KAFKA_BUFFER_BYTES", String.valueOf(1 << 20));
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
