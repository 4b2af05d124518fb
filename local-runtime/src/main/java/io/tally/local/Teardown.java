package io.tally.local;

import java.util.ArrayDeque;
import java.util.Deque;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a stack has started so far, stopped newest first: each part is stopped after everything that
 * uses it. A part that fails to stop is logged, and the others are still stopped.
 */
public final class Teardown implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(Teardown.class);

  private final Deque<AutoCloseable> parts = new ArrayDeque<>();

  /** Adds a part that has started, to be stopped before every part added earlier. */
  public void add(AutoCloseable part) {
    parts.push(part);
  }

  @Override
  public void close() {
    while (!parts.isEmpty()) {
      AutoCloseable part = parts.pop();
      try {
        part.close();
      } catch (Exception e) {
        LOG.warn("error while stopping {}", part, e);
      }
    }
  }
}
