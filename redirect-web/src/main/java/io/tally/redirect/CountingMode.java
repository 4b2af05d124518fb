package io.tally.redirect;

/** How a redirect counts its click. */
public enum CountingMode {
  /** No counting at all: the baseline the benchmark compares against. */
  OFF,
  /** One click event to Kafka, sent without waiting; the production mode. */
  ASYNC,
  /**
   * {@code UPDATE links SET clicks = clicks + 1} inside the request, like the naive design. For
   * measurement only: it makes the busiest row a write hot spot and ties every redirect to the database.
   */
  SYNC
}
