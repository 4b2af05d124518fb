package io.tally.chaos;

/**
 * One fault scenario: it runs on a stack of its own and reports what it measured and which claims
 * held.
 */
public interface Scenario {

  /** The name on the command line. */
  String name();

  /** The claim, in one line, as the table shows it. */
  String title();

  Outcome run(ChaosStack stack) throws Exception;
}
