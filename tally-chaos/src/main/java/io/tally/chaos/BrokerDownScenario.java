package io.tally.chaos;

import java.time.Duration;

/**
 * Scenario 2: the only Kafka broker stops under redirect load and comes back after the outage. Redirects
 * must not notice; clicks that find the producer's buffer full are dropped and counted; sending resumes by
 * itself (the claims are {@link OutageScenario}'s).
 */
final class BrokerDownScenario extends OutageScenario {

  @Override
  public String name() {
    return "broker-down";
  }

  @Override
  public String title() {
    return "2. Kafka broker down under redirect load: 100% answered 302, drops counted exactly, sending resumes";
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
