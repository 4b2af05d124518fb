package io.tally.redirect.links;

import com.google.common.hash.BloomFilter;
import com.google.common.hash.Funnels;
import com.google.common.io.ByteStreams;
import com.google.common.io.CountingOutputStream;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The codes of every link in PostgreSQL, held in memory as a Bloom filter, so that a code with no
 * link is answered without a query: what the database spends on unknown codes no longer grows with
 * the rate at which anyone invents them.
 *
 * <p>A background thread holds one connection of its own, listens on {@link #CHANNEL} (a trigger on
 * {@code links} notifies each changed code when its transaction commits), and loads the whole set:
 * at start, every {@code reloadEvery}, when more codes were added than the filter was sized for,
 * and after every reconnection, since notifications sent while it was away are lost. Only while it
 * listens is the set trusted ({@link #mightExist} says no); otherwise every code may exist, and
 * lookups go to the database as they did without it. Each notified code is also handed to {@code
 * onChange}, so that a replica forgets what it cached of a link changed elsewhere.
 *
 * <p>A Bloom filter, not an exact set: at the {@link #FALSE_POSITIVE_RATE} under 10 bits per code
 * it was sized for (an exact set of codes of up to 64 characters needs several bytes each), and a
 * false positive costs only the query every unknown code cost before. Codes are never removed: a
 * removed link stays a false positive until the next reload.
 */
public final class KnownCodes implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(KnownCodes.class);

  /** The channel of the {@code links_notify_change} trigger (migration V13). */
  static final String CHANNEL = "link_changes";

  static final double FALSE_POSITIVE_RATE = 0.01;

  /** A filter always has room for this many codes, so that a small table needs no early reload. */
  private static final long MIN_CAPACITY = 100_000;

  /** Room for this share more codes than the table held when the filter was loaded. */
  private static final double HEADROOM = 1.25;

  /** How long the listener waits for notifications before it checks its connection is alive. */
  private static final int WAIT_MILLIS = 1_000;

  /** A connection quiet this long is asked whether it is alive: a half-open one never says. */
  private static final long PING_AFTER_NANOS = Duration.ofSeconds(5).toNanos();

  private static final Duration MAX_BACKOFF = Duration.ofSeconds(5);

  /** Opens the listener's own connection. */
  @FunctionalInterface
  public interface ConnectionSource {
    Connection open() throws SQLException;
  }

  private record Filter(BloomFilter<CharSequence> bloom, long capacity, long bytes) {}

  private final ConnectionSource connections;
  private final Duration reloadEvery;
  private final Consumer<String> onChange;
  private final Counter answeredFromMemory;
  private final Counter reloads;
  private final CountDownLatch firstLoad = new CountDownLatch(1);
  private final Thread listener;

  /** The filter while it is trusted; null before the first load and while not listening. */
  private volatile Filter current;

  /** The last filter loaded, trusted or not, for the size gauges. */
  private volatile Filter lastLoaded;

  private volatile boolean closed;

  private KnownCodes(
      ConnectionSource connections,
      Duration reloadEvery,
      Consumer<String> onChange,
      MeterRegistry registry) {
    this.connections = connections;
    this.reloadEvery = reloadEvery;
    this.onChange = onChange;
    this.answeredFromMemory =
        Counter.builder("tally.link.codes.unknown.answered")
            .description("lookups of codes with no link answered from the in-memory set of codes")
            .register(registry);
    this.reloads =
        Counter.builder("tally.link.codes.reloads")
            .description("loads of the whole set of codes from PostgreSQL")
            .register(registry);
    Gauge.builder("tally.link.codes.current", this, k -> k.current == null ? 0 : 1)
        .description("1 while the set of codes is kept current by notifications, else 0")
        .register(registry);
    Gauge.builder("tally.link.codes", this, k -> k.size())
        .description("codes in the in-memory set (approximate)")
        .register(registry);
    Gauge.builder("tally.link.codes.bytes", this, k -> k.bytes())
        .description("memory of the in-memory set of codes")
        .baseUnit("bytes")
        .register(registry);
    this.listener = new Thread(this::listen, "link-codes");
    this.listener.setDaemon(true);
  }

  /**
   * Starts listening and loading in the background; {@link #mightExist} says yes to every code
   * until the first load is done.
   *
   * @param onChange called with each code changed in PostgreSQL, on the listener's thread
   */
  public static KnownCodes start(
      ConnectionSource connections,
      Duration reloadEvery,
      Consumer<String> onChange,
      MeterRegistry registry) {
    KnownCodes codes = new KnownCodes(connections, reloadEvery, onChange, registry);
    codes.listener.start();
    return codes;
  }

  /**
   * False only when no link has this code; true when one may have it, or when the set is not
   * current and cannot say.
   */
  public boolean mightExist(String code) {
    Filter filter = current;
    if (filter == null || filter.bloom().mightContain(code)) {
      return true;
    }
    answeredFromMemory.increment();
    return false;
  }

  /**
   * Adds a code this process has just created, so that it redirects here before its notification
   * arrives.
   */
  public void add(String code) {
    Filter filter = current;
    if (filter != null) {
      filter.bloom().put(code);
    }
  }

  /** Waits at most {@code patience} for the first load; returns whether the set is current. */
  public boolean awaitCurrent(Duration patience) {
    try {
      firstLoad.await(patience.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return current != null;
  }

  /** Whether the set is kept current, so that {@link #mightExist} can say no. */
  public boolean isCurrent() {
    return current != null;
  }

  /** Codes in the set, approximately; 0 before the first load. */
  public long size() {
    Filter filter = lastLoaded;
    return filter == null ? 0 : filter.bloom().approximateElementCount();
  }

  /** The filter's memory in bytes; 0 before the first load. */
  public long bytes() {
    Filter filter = lastLoaded;
    return filter == null ? 0 : filter.bytes();
  }

  @Override
  public void close() {
    closed = true;
    listener.interrupt();
    try {
      listener.join(WAIT_MILLIS * 3L);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void listen() {
    Duration backoff = Duration.ofMillis(100);
    boolean failing = false;
    while (!closed) {
      try (Connection connection = connections.open()) {
        try (Statement listen = connection.createStatement()) {
          listen.execute("LISTEN " + CHANNEL);
        }
        // Listening before loading: a code committed while the load runs is in the load, or in a
        // notification read after it.
        reload(connection);
        if (failing) {
          LOG.info("listening for link changes again; the set of codes is current");
          failing = false;
        }
        backoff = Duration.ofMillis(100);
        follow(connection);
      } catch (SQLException | RuntimeException e) {
        current = null;
        if (closed) {
          return;
        }
        if (!failing) {
          LOG.warn(
              "lost the link-change listener ({}); unknown codes are looked up in PostgreSQL until"
                  + " it is back",
              e.getMessage());
          failing = true;
        }
        try {
          Thread.sleep(backoff.toMillis());
        } catch (InterruptedException interrupted) {
          return;
        }
        backoff = backoff.multipliedBy(2);
        if (backoff.compareTo(MAX_BACKOFF) > 0) {
          backoff = MAX_BACKOFF;
        }
      }
    }
  }

  /** Applies notifications until the connection fails or this closes; reloads when due. */
  private void follow(Connection connection) throws SQLException {
    PGConnection pg = connection.unwrap(PGConnection.class);
    long reloadDue = System.nanoTime() + reloadEvery.toNanos();
    long lastHeard = System.nanoTime();
    while (!closed) {
      PGNotification[] notifications = pg.getNotifications(WAIT_MILLIS);
      long now = System.nanoTime();
      if (notifications != null && notifications.length > 0) {
        lastHeard = now;
        for (PGNotification notification : notifications) {
          String code = notification.getParameter();
          add(code);
          onChange.accept(code);
        }
      } else if (now - lastHeard > PING_AFTER_NANOS) {
        if (!connection.isValid(2)) {
          throw new SQLException("the listening connection stopped answering");
        }
        lastHeard = now;
      }
      Filter filter = current;
      if (now - reloadDue >= 0
          || (filter != null && filter.bloom().approximateElementCount() > filter.capacity())) {
        reload(connection);
        reloadDue = System.nanoTime() + reloadEvery.toNanos();
      }
    }
  }

  /** Loads every code into a new filter, sized for the table as it is, and makes it current. */
  private void reload(Connection connection) throws SQLException {
    connection.setAutoCommit(false);
    connection.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
    try {
      long count;
      try (Statement statement = connection.createStatement();
          ResultSet rs = statement.executeQuery("SELECT count(*) FROM links")) {
        rs.next();
        count = rs.getLong(1);
      }
      long capacity = capacityFor(count);
      BloomFilter<CharSequence> bloom = emptyFilter(capacity);
      try (PreparedStatement scan = connection.prepareStatement("SELECT code FROM links")) {
        // A cursor: the table is read 10,000 codes at a time, never held whole.
        scan.setFetchSize(10_000);
        try (ResultSet rs = scan.executeQuery()) {
          while (rs.next()) {
            bloom.put(rs.getString(1));
          }
        }
      }
      connection.commit();
      Filter filter = new Filter(bloom, capacity, serializedSize(bloom));
      lastLoaded = filter;
      current = filter;
      reloads.increment();
      firstLoad.countDown();
    } finally {
      connection.setAutoCommit(true);
    }
  }

  /**
   * An empty filter as a load sizes it for a table of {@code codes} codes: for a benchmark that
   * measures the memory and false positives at a size no test loads.
   */
  public static BloomFilter<CharSequence> sizedFor(long codes) {
    return emptyFilter(capacityFor(codes));
  }

  private static long capacityFor(long codes) {
    return Math.max(MIN_CAPACITY, (long) (codes * HEADROOM));
  }

  private static BloomFilter<CharSequence> emptyFilter(long capacity) {
    return BloomFilter.create(
        Funnels.stringFunnel(StandardCharsets.UTF_8), capacity, FALSE_POSITIVE_RATE);
  }

  /** The memory of a filter: its serialized size, which is its bits and a few bytes of header. */
  public static long serializedSize(BloomFilter<CharSequence> bloom) {
    CountingOutputStream counting = new CountingOutputStream(ByteStreams.nullOutputStream());
    try {
      bloom.writeTo(counting);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return counting.getCount();
  }
}
