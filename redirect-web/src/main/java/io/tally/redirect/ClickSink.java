package io.tally.redirect;

import io.micrometer.core.instrument.MeterRegistry;
import io.tally.event.ClickEvent;
import io.tally.redirect.links.LinkStore;
import java.time.Duration;
import javax.sql.DataSource;

/**
 * What happens to a click once its redirect is answered: redirect-web hands it to Kafka ({@link
 * ClickPublisher}); {@link RedirectWebServer#start(RedirectWebConfig, Factory)} plugs in another.
 *
 * <p>The sink runs on the request thread, inside the redirect's measured time, so it must not wait
 * for anything slow. An exception it throws answers the redirect with an error instead of a 302: a
 * {@link LinkStore.StoreException} answers 503.
 */
public interface ClickSink extends AutoCloseable {

  /** Takes one answered redirect's click. */
  void accept(Click click);

  /**
   * Gets ready for the first click, waiting at most {@code patience}; returns quietly when it
   * cannot.
   */
  default void warmUp(Duration patience) {}

  @Override
  default void close() {}

  /**
   * One answered redirect, to be read within {@link #accept}: it reads the request, which is gone
   * once the answer is sent. Its event is made on the first call of {@link #event()}, not before:
   * making it hashes the visitor and resolves the country, work a sink that needs only the code
   * does not pay for.
   */
  interface Click {

    /** The code of the link the redirect answered. */
    String code();

    /**
     * The click's event, stamped with the time the request arrived; the same event on every call.
     */
    ClickEvent event();
  }

  /** Opens the sink of a server that is starting, with what the server has opened for it. */
  @FunctionalInterface
  interface Factory {

    /**
     * @param linkDatabase the pool the redirects read their links from, for a sink that writes to
     *     the same database and competes with them for its connections
     */
    ClickSink open(RedirectWebConfig config, DataSource linkDatabase, MeterRegistry registry);
  }
}
