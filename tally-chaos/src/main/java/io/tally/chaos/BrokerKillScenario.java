package io.tally.chaos;

import io.tally.embedded.KafkaBrokerCluster;
import io.tally.local.LocalServices.Topology;
import java.util.List;
import java.util.Map;

/**
 * Scenario 14: one of three Kafka brokers is killed with SIGKILL under redirect load, the leader of
 * click partition 0 so that leadership must move, and started again after the outage. With every
 * partition on three brokers and two needed in sync, the producer's writes go on to the new
 * leaders: redirects answer 302, every acknowledged click is counted once, and the node comes back
 * into every partition's in-sync set (the other claims are {@link OutageScenario}'s).
 */
final class BrokerKillScenario extends OutageScenario {

  private int victim;

  BrokerKillScenario() {
    super(
        "broker-kill",
        "14. One of three Kafka brokers killed under redirect load: 302s, every acknowledged"
            + " click counted once");
  }

  @Override
  public Topology topology() {
    return new Topology(3, false);
  }

  @Override
  void fault(ChaosStack stack) throws Exception {
    KafkaBrokerCluster kafka = stack.services().kafkaCluster().orElseThrow();
    victim = kafka.leaderOf(ChaosStack.CLICKS, 0);
    kafka.kill(victim);
  }

  @Override
  void heal(ChaosStack stack) {
    stack.services().kafkaCluster().orElseThrow().restart(victim);
  }

  @Override
  void afterLoad(ChaosStack stack, Outcome outcome) throws Exception {
    KafkaBrokerCluster kafka = stack.services().kafkaCluster().orElseThrow();
    Map<Integer, List<Integer>> isr =
        ChaosStack.poll(
            () -> kafka.inSyncReplicas(ChaosStack.CLICKS),
            replicas -> replicas.values().stream().allMatch(nodes -> nodes.size() == 3),
            stack.settings().settle());
    outcome.check(
        "the killed broker back in every click partition's in-sync set",
        isr.values().stream().allMatch(nodes -> nodes.contains(victim)),
        "node " + victim + "; in sync by partition " + isr);
    long dropped = outcome.dropped.values().stream().mapToLong(Long::longValue).sum();
    outcome.note("node " + victim + " killed; clicks dropped by the producer: " + dropped);
  }
}
