package io.tally.clickjob.io;

import io.tally.clickjob.records.AggregateRow;
import io.tally.clickjob.records.DimensionCount;
import io.tally.clickjob.records.MinuteCount;
import io.tally.clickjob.records.PeriodTotals;
import java.io.IOException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.operators.ProcessingTimeService;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.connector.jdbc.JdbcConnectionOptions;
import org.apache.flink.connector.jdbc.JdbcStatementBuilder;
import org.apache.flink.connector.jdbc.datasource.connections.JdbcConnectionProvider;
import org.apache.flink.connector.jdbc.datasource.connections.SimpleJdbcConnectionProvider;
import org.apache.flink.util.function.SerializableFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes the rows of {@code click_counts}, {@code click_hourly}, {@code click_daily} and {@code
 * click_dimensions_hourly} in batches, one transaction per batch for all four tables: a checkpoint
 * waits for one commit, not four, and a reader never sees an hour that its minutes do not add up to
 * yet.
 *
 * <p>Every row is a whole total written by an upsert that never lowers it ({@link
 * ClickCountUpsert}, {@link AggregateUpserts}), so the sink is at least once: a batch is sent when
 * it holds {@code batchSize} rows, {@code flushInterval} after its first row, and before every
 * checkpoint, and a batch sent again after a failure or a restore changes nothing. A batch keeps
 * only the last row of each key: PostgreSQL refuses an {@code INSERT ... ON CONFLICT DO UPDATE}
 * that meets one key twice, which is what the JDBC driver's {@code reWriteBatchedInserts=true}
 * makes of a batch, and the last total says all the earlier ones did. The sink turns that rewrite
 * on for its own connection: a batch of each table then goes to PostgreSQL as a few multi-row
 * statements instead of one statement per row, which took most of PostgreSQL's time.
 */
public final class AggregatesSink implements Sink<AggregateRow> {

  private static final Logger LOG = LoggerFactory.getLogger(AggregatesSink.class);

  private final JdbcConnectionOptions connection;
  private final int batchSize;
  private final long flushIntervalMillis;
  private final int maxRetries;

  /**
   * @param batchSize rows (after keeping the last of each key) per batch
   * @param flushInterval longest time a row waits before its batch is sent
   * @param maxRetries attempts after a failed batch, each on a new connection
   */
  public AggregatesSink(
      JdbcConnectionOptions connection, int batchSize, Duration flushInterval, int maxRetries) {
    this.connection = connection;
    this.batchSize = batchSize;
    this.flushIntervalMillis = flushInterval.toMillis();
    this.maxRetries = maxRetries;
  }

  /** The same connection, with the driver rewriting each batch into multi-row statements. */
  private static JdbcConnectionOptions rewritingBatches(JdbcConnectionOptions connection) {
    JdbcConnectionOptions.JdbcConnectionOptionsBuilder builder =
        new JdbcConnectionOptions.JdbcConnectionOptionsBuilder()
            .withUrl(connection.getDbURL())
            .withDriverName(connection.getDriverName())
            .withConnectionCheckTimeoutSeconds(connection.getConnectionCheckTimeoutSeconds());
    connection
        .getProperties()
        .forEach((key, value) -> builder.withProperty((String) key, (String) value));
    return builder.withProperty("reWriteBatchedInserts", "true").build();
  }

  @Override
  public SinkWriter<AggregateRow> createWriter(WriterInitContext context) {
    return new Writer(context.getProcessingTimeService());
  }

  /** One table's rows of the batch, the last of each key. */
  private static final class Table<T> {
    private final String sql;
    private final JdbcStatementBuilder<T> binder;
    private final SerializableFunction<T, ?> key;
    private final Map<Object, T> rows = new LinkedHashMap<>();

    Table(String sql, JdbcStatementBuilder<T> binder, SerializableFunction<T, ?> key) {
      this.sql = sql;
      this.binder = binder;
      this.key = key;
    }

    /** Adds a row; returns whether it is a key the batch did not have. */
    boolean add(T row) {
      return rows.put(key.apply(row), row) == null;
    }

    void execute(Connection db) throws SQLException {
      if (rows.isEmpty()) {
        return;
      }
      try (PreparedStatement ps = db.prepareStatement(sql)) {
        for (T row : rows.values()) {
          binder.accept(ps, row);
          ps.addBatch();
        }
        ps.executeBatch();
      }
    }
  }

  private final class Writer implements SinkWriter<AggregateRow> {

    private final Table<MinuteCount> minutes =
        new Table<>(ClickCountUpsert.SQL, new ClickCountUpsert(), MinuteCount::key);
    private final Table<PeriodTotals> hours =
        new Table<>(AggregateUpserts.HOURS_SQL, AggregateUpserts.HOURS, PeriodTotals::key);
    private final Table<PeriodTotals> days =
        new Table<>(AggregateUpserts.DAYS_SQL, AggregateUpserts.DAYS, PeriodTotals::key);
    private final Table<DimensionCount> dimensions =
        new Table<>(
            AggregateUpserts.DIMENSIONS_SQL, AggregateUpserts.DIMENSIONS, DimensionCount::key);
    private final Table<DimensionCount> dayDimensions =
        new Table<>(
            AggregateUpserts.DAY_DIMENSIONS_SQL,
            AggregateUpserts.DAY_DIMENSIONS,
            DimensionCount::key);
    private final List<Table<?>> tables = List.of(minutes, hours, days, dimensions, dayDimensions);
    private final BatchSchedule schedule;
    private final JdbcConnectionProvider connections =
        new SimpleJdbcConnectionProvider(rewritingBatches(connection));
    private int pending;

    Writer(ProcessingTimeService timers) {
      this.schedule = new BatchSchedule(timers, batchSize, flushIntervalMillis, this::send);
    }

    @Override
    public void write(AggregateRow row, Context context) throws IOException, InterruptedException {
      boolean added;
      if (row.minute() != null) {
        added = minutes.add(row.minute());
      } else if (row.hour() != null) {
        added = hours.add(row.hour());
      } else if (row.day() != null) {
        added = days.add(row.day());
      } else if (row.dimension() != null) {
        added = dimensions.add(row.dimension());
      } else {
        added = dayDimensions.add(row.dayDimension());
      }
      if (added) {
        pending++;
      }
      schedule.added(pending);
    }

    @Override
    public void flush(boolean endOfInput) throws IOException, InterruptedException {
      send();
    }

    private void send() throws IOException, InterruptedException {
      if (pending == 0) {
        return;
      }
      for (int attempt = 0; ; attempt++) {
        try {
          Connection db = connections.getOrEstablishConnection();
          db.setAutoCommit(false);
          for (Table<?> table : tables) {
            table.execute(db);
          }
          db.commit();
          break;
        } catch (SQLException | ClassNotFoundException e) {
          connections.closeConnection();
          if (attempt >= maxRetries) {
            throw new IOException(
                "writing " + pending + " aggregate rows failed " + (attempt + 1) + " times", e);
          }
          LOG.warn(
              "Writing {} aggregate rows failed (attempt {} of {}); retrying on a new connection",
              pending,
              attempt + 1,
              maxRetries + 1,
              e);
          Thread.sleep(1000L * (attempt + 1));
        }
      }
      tables.forEach(table -> table.rows.clear());
      pending = 0;
    }

    @Override
    public void close() {
      connections.closeConnection();
    }
  }
}
