package io.tally.chaos;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What one scenario measured, for the table: the clicks it sent, redirects by status, the
 * producer's sent/delivered/dropped accounting, drift against the truth per table, dead letters by
 * reason, job restarts and the time to recover; and each claim the scenario checks, passed or not.
 */
public final class Outcome {

  /** A claim of the scenario and whether the run bore it out. */
  public record Check(String claim, boolean passed, String detail) {}

  final String scenario;
  long clicksSent;
  final Map<Integer, Long> redirects = new TreeMap<>();

  /**
   * From redirect-web's metrics: events handed to the producer, acknowledged, and dropped by
   * reason.
   */
  Long producerSent;

  Long producerDelivered;
  final Map<String, Long> dropped = new TreeMap<>();
  Map<String, Long> drift;
  final Map<String, Long> deadLetters = new TreeMap<>();
  long restarts;
  Duration recovery;
  final List<Check> checks = new ArrayList<>();
  final List<String> notes = new ArrayList<>();

  public Outcome(String scenario) {
    this.scenario = scenario;
  }

  public Outcome check(String claim, boolean passed, String detail) {
    checks.add(new Check(claim, passed, detail));
    return this;
  }

  /** Keeps the drift for the table and checks under {@code claim} that it is 0 in every table. */
  public Outcome checkDrift(String claim, Map<String, Long> drift) {
    this.drift = drift;
    return check(claim, Drift.total(drift) == 0, drift.toString());
  }

  public Outcome note(String note) {
    notes.add(note);
    return this;
  }

  public boolean passed() {
    return !checks.isEmpty() && checks.stream().allMatch(Check::passed);
  }

  public List<Check> checks() {
    return checks;
  }

  public Map<String, Long> drift() {
    return drift;
  }

  public Map<String, Long> deadLetters() {
    return deadLetters;
  }

  public long restarts() {
    return restarts;
  }

  public List<String> notes() {
    return notes;
  }
}
