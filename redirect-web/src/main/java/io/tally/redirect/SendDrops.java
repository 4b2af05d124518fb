package io.tally.redirect;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Clock;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The clicks this instance answered but could not hand to Kafka, per UTC minute, kept in {@code
 * click_send_drops} for the links' audit ledger: the drop metric says how many since the process
 * started, this says when, and outlives the process. Each instance writes whole totals of its own
 * minutes under a name of its own, so a write sent twice changes nothing and instances never add to
 * each other's rows. A minute is written every {@code every} while it is open and for a minute
 * after; while PostgreSQL is away the minutes wait in memory, at most {@link #KEPT_MINUTES} of
 * them, the oldest given up first.
 */
public final class SendDrops implements AutoCloseable {

  /** A day of minutes with drops, waiting for PostgreSQL. */
  static final int KEPT_MINUTES = 24 * 60;

  private static final Logger LOG = LoggerFactory.getLogger(SendDrops.class);
  private static final long MINUTE = Duration.ofMinutes(1).toMillis();
  private static final String UPSERT =
      "INSERT INTO click_send_drops (instance, minute, dropped, updated_at) VALUES (?, ?, ?, now())"
          + " ON CONFLICT (instance, minute) DO UPDATE SET dropped = EXCLUDED.dropped, updated_at"
          + " = now() WHERE click_send_drops.dropped < EXCLUDED.dropped";

  private final DataSource dataSource;
  private final Clock clock;
  private final String instance;
  private final ConcurrentSkipListMap<Long, LongAdder> minutes = new ConcurrentSkipListMap<>();
  private final long settleMillis;
  private final ScheduledExecutorService writer;

  /**
   * @param settle how long after a minute's end a drop may still be counted in it: the producer's
   *     delivery timeout, plus a minute
   * @param every how often the waiting minutes are written; zero for only when asked
   */
  SendDrops(DataSource dataSource, Clock clock, String instance, Duration settle, Duration every) {
    this.dataSource = dataSource;
    this.clock = clock;
    this.instance = instance;
    this.settleMillis = settle.toMillis();
    if (every.isZero()) {
      writer = null;
    } else {
      writer =
          Executors.newSingleThreadScheduledExecutor(
              r -> {
                Thread t = new Thread(r, "send-drops-writer");
                t.setDaemon(true);
                return t;
              });
      writer.scheduleWithFixedDelay(
          this::write, every.toMillis(), every.toMillis(), TimeUnit.MILLISECONDS);
    }
  }

  /**
   * Writes every 10 s under a name made of the host's and a random part, new at each start; a
   * minute is settled {@code deliveryTimeout} and a minute after its end.
   */
  public static SendDrops start(DataSource dataSource, Duration deliveryTimeout) {
    return new SendDrops(
        dataSource,
        Clock.systemUTC(),
        instanceName(),
        deliveryTimeout.plus(Duration.ofMinutes(1)),
        Duration.ofSeconds(10));
  }

  /**
   * Counts one dropped click, answered at {@code clickTs}. Called on the redirect path and the
   * producer's thread: no I/O, no lock.
   */
  public void record(long clickTs) {
    long minute = Math.floorDiv(clickTs, MINUTE) * MINUTE;
    LongAdder dropped = minutes.get(minute);
    if (dropped == null) {
      dropped = minutes.computeIfAbsent(minute, m -> new LongAdder());
      while (minutes.size() > KEPT_MINUTES) {
        minutes.pollFirstEntry();
      }
    }
    dropped.increment();
  }

  /**
   * Writes each waiting minute's total, and forgets the minutes that are over once written. A
   * failure is logged, and the minutes wait for the next write.
   */
  void write() {
    if (minutes.isEmpty()) {
      return;
    }
    long current = Math.floorDiv(clock.millis(), MINUTE) * MINUTE;
    Map<Long, Long> totals = new TreeMap<>();
    minutes.forEach((minute, dropped) -> totals.put(minute, dropped.sum()));
    try (Connection c = dataSource.getConnection();
        PreparedStatement upsert = c.prepareStatement(UPSERT)) {
      for (Map.Entry<Long, Long> minute : totals.entrySet()) {
        upsert.setString(1, instance);
        upsert.setTimestamp(2, new Timestamp(minute.getKey()));
        upsert.setLong(3, minute.getValue());
        upsert.addBatch();
      }
      upsert.executeBatch();
    } catch (SQLException | RuntimeException e) {
      // Caught whole: an exception thrown out of a scheduled task ends its schedule for good.
      LOG.warn(
          "cannot write {} minutes of dropped clicks; they wait for the next try: {}",
          totals.size(),
          e.toString());
      return;
    }
    // A click is given up at most the producer's delivery timeout after it was answered, so a
    // minute that ended longer ago than that gets no more drops: written whole, it is done.
    totals.keySet().stream()
        .filter(minute -> minute < current - settleMillis)
        .forEach(minutes::remove);
  }

  /** Stops writing after a last write: called once the producer can drop nothing more. */
  @Override
  public void close() {
    if (writer != null) {
      writer.shutdown();
      try {
        writer.awaitTermination(5, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    write();
  }

  private static String instanceName() {
    String host;
    try {
      host = InetAddress.getLocalHost().getHostName();
    } catch (UnknownHostException e) {
      host = "redirect-web";
    }
    byte[] random = new byte[4];
    new SecureRandom().nextBytes(random);
    String suffix = "-" + HexFormat.of().formatHex(random);
    return host.substring(0, Math.min(host.length(), 64 - suffix.length())) + suffix;
  }
}
