package io.tally.chaos;

import io.tally.local.LocalServices.Topology;

/**
 * One fault scenario: it runs on a stack of its own and reports what it measured and which claims
 * held.
 */
public abstract class Scenario {

  private final String name;
  private final String title;

  /** A scenario called {@code name} on the command line, with its claim in one line. */
  Scenario(String name, String title) {
    this.name = name;
    this.title = title;
  }

  /** The name on the command line. */
  public final String name() {
    return name;
  }

  /** The claim, in one line, as the table shows it. */
  public final String title() {
    return title;
  }

  /** The services the scenario's stack runs: one of each unless its fault needs more. */
  public Topology topology() {
    return Topology.SINGLE;
  }

  public abstract Outcome run(ChaosStack stack) throws Exception;
}
