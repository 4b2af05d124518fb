package io.tally.local;

/**
 * A failure whose message is the one line the user reads ("no Flink cluster answers at ..."); the
 * cause, if any, is for the log file, not the console.
 */
public final class FlinkCommandFailure extends IllegalStateException {

  public FlinkCommandFailure(String message, Throwable cause) {
    super(message, cause);
  }
}
