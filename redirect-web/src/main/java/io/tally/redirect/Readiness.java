package io.tally.redirect;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * Whether PostgreSQL and Kafka answer, as {@code /health} reports it: probed on a thread of its own
 * every {@link #PROBE_EVERY}, never on a request. A probe of an unreachable Kafka waits for its
 * timeout, and one of PostgreSQL takes a pooled connection: asked per request, a flood of health
 * checks would hold a request thread each for that long and take the connections redirects need.
 */
final class Readiness implements AutoCloseable {

  /** How often both are probed; a probe takes a few milliseconds, or its timeout when down. */
  static final Duration PROBE_EVERY = Duration.ofSeconds(1);

  /**
   * @param database whether PostgreSQL answered
   * @param kafka whether the Kafka broker answered
   */
  record State(boolean database, boolean kafka) {}

  private final BooleanSupplier database;
  private final BooleanSupplier kafka;
  private final ScheduledExecutorService prober;
  private volatile State state;

  private Readiness(BooleanSupplier database, BooleanSupplier kafka) {
    this.database = database;
    this.kafka = kafka;
    this.prober =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "health-probe");
              t.setDaemon(true);
              return t;
            });
    probe();
  }

  /**
   * Probes both once now, so that the first answer is true, then every {@code every} in the
   * background until closed.
   */
  static Readiness probing(BooleanSupplier database, BooleanSupplier kafka, Duration every) {
    Readiness readiness = new Readiness(database, kafka);
    readiness.prober.scheduleWithFixedDelay(
        readiness::probe, every.toMillis(), every.toMillis(), TimeUnit.MILLISECONDS);
    return readiness;
  }

  /** The last probe's answers. */
  State state() {
    return state;
  }

  void probe() {
    state = new State(database.getAsBoolean(), kafka.getAsBoolean());
  }

  @Override
  public void close() {
    prober.shutdownNow();
  }
}
