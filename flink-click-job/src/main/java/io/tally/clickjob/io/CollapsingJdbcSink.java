package io.tally.clickjob.io;

import io.tally.counting.sql.BatchSchedule;
import java.io.IOException;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.connector.base.DeliveryGuarantee;
import org.apache.flink.connector.jdbc.JdbcConnectionOptions;
import org.apache.flink.connector.jdbc.JdbcExactlyOnceOptions;
import org.apache.flink.connector.jdbc.JdbcExecutionOptions;
import org.apache.flink.connector.jdbc.JdbcStatementBuilder;
import org.apache.flink.connector.jdbc.core.datastream.sink.JdbcSink;
import org.apache.flink.connector.jdbc.core.datastream.sink.writer.JdbcWriter;
import org.apache.flink.connector.jdbc.core.datastream.sink.writer.JdbcWriterState;
import org.apache.flink.connector.jdbc.datasource.connections.JdbcConnectionProvider;
import org.apache.flink.connector.jdbc.datasource.connections.SimpleJdbcConnectionProvider;
import org.apache.flink.connector.jdbc.datasource.statements.SimpleJdbcQueryStatement;
import org.apache.flink.connector.jdbc.internal.JdbcOutputSerializer;
import org.apache.flink.util.function.SerializableFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An at-least-once {@link JdbcSink} of upserts whose batches hold at most one row per key: of the
 * rows written for one key since the last batch, only the last is sent.
 *
 * <p>Two reasons. PostgreSQL refuses an {@code INSERT ... ON CONFLICT DO UPDATE} that meets one key
 * twice ("cannot affect row a second time"), and the JDBC driver's {@code
 * reWriteBatchedInserts=true} turns a batch into exactly such a statement: a window that fires
 * twice within one batch (an early and a late firing) would fail the sink on every retry. And every
 * row here is a whole total that the upsert never lowers, so the last row of a key says all that
 * the earlier ones did: sending them too only costs time.
 *
 * <p>The batch is sent when it holds {@code batchSize} keys, {@code flushInterval} after its first
 * row, and before every checkpoint. It is the same sink as {@link JdbcSink} (the same operators and
 * state), so checkpoints taken with either restore into the other.
 */
public final class CollapsingJdbcSink<T> extends JdbcSink<T> {

  private static final Logger LOG = LoggerFactory.getLogger(CollapsingJdbcSink.class);

  private final JdbcConnectionProvider connections;
  private final JdbcExecutionOptions execution;
  private final SimpleJdbcQueryStatement<T> statement;
  private final SerializableFunction<T, ?> key;
  private final int batchSize;
  private final long flushIntervalMillis;

  /**
   * @param sql the upsert, with one row's parameters
   * @param binder binds one row's parameters
   * @param key what identifies the row {@code sql} writes (its conflict target)
   * @param batchSize keys per batch
   * @param flushIntervalMillis longest time a row waits before its batch is sent
   * @param maxRetries attempts after a failed batch
   */
  public CollapsingJdbcSink(
      JdbcConnectionOptions connection,
      String sql,
      JdbcStatementBuilder<T> binder,
      SerializableFunction<T, ?> key,
      int batchSize,
      long flushIntervalMillis,
      int maxRetries) {
    this(
        new SimpleJdbcConnectionProvider(connection),
        new SimpleJdbcQueryStatement<>(sql, binder),
        key,
        // The writer below sends the batch; the inner one only flushes when told to.
        JdbcExecutionOptions.builder()
            .withBatchSize(batchSize)
            .withBatchIntervalMs(0)
            .withMaxRetries(maxRetries)
            .build(),
        batchSize,
        flushIntervalMillis);
  }

  private CollapsingJdbcSink(
      JdbcConnectionProvider connections,
      SimpleJdbcQueryStatement<T> statement,
      SerializableFunction<T, ?> key,
      JdbcExecutionOptions execution,
      int batchSize,
      long flushIntervalMillis) {
    super(
        DeliveryGuarantee.AT_LEAST_ONCE,
        connections,
        execution,
        JdbcExactlyOnceOptions.defaults(),
        statement);
    this.connections = connections;
    this.execution = execution;
    this.statement = statement;
    this.key = key;
    this.batchSize = batchSize;
    this.flushIntervalMillis = flushIntervalMillis;
  }

  @Override
  public JdbcWriter<T> createWriter(WriterInitContext context) throws IOException {
    return restoreWriter(context, List.of());
  }

  @Override
  public JdbcWriter<T> restoreWriter(WriterInitContext context, Collection<JdbcWriterState> state)
      throws IOException {
    JdbcOutputSerializer<T> serializer =
        JdbcOutputSerializer.of(context.createInputSerializer(), context.isObjectReuseEnabled());
    return new Writer<>(this, serializer, state, context);
  }

  /**
   * Keeps the last row of each key until the batch is sent, then hands the rows to the JDBC writer.
   */
  private static final class Writer<T> extends JdbcWriter<T> {

    private final Map<Object, T> pending = new LinkedHashMap<>();
    private final SerializableFunction<T, ?> key;
    private final JdbcOutputSerializer<T> copier;
    private final BatchSchedule schedule;
    private final JdbcConnectionProvider connections;

    Writer(
        CollapsingJdbcSink<T> sink,
        JdbcOutputSerializer<T> serializer,
        Collection<JdbcWriterState> state,
        WriterInitContext context)
        throws IOException {
      super(
          sink.connections,
          sink.execution,
          JdbcExactlyOnceOptions.defaults(),
          sink.statement,
          serializer,
          DeliveryGuarantee.AT_LEAST_ONCE,
          state,
          context);
      this.key = sink.key;
      this.connections = sink.connections;
      this.copier = serializer;
      this.schedule =
          new BatchSchedule(
              context.getProcessingTimeService(),
              sink.batchSize,
              sink.flushIntervalMillis,
              this::send);
    }

    @Override
    public void write(T row, Context context) throws IOException, InterruptedException {
      // With object reuse the caller may reuse the instance: a row kept past this call is a copy.
      pending.put(key.apply(row), copier.serialize(row));
      schedule.added(pending.size());
    }

    @Override
    public void flush(boolean endOfInput) throws IOException, InterruptedException {
      send();
      super.flush(endOfInput);
    }

    /**
     * Closes without throwing when the last batch cannot be sent. Those rows were never confirmed
     * by a checkpoint, so the job writes them again after it restores; and Flink's JDBC writer,
     * closed after its connection was lost, fails on a statement it never prepared, which thrown
     * from a task that is already failing would stop its whole TaskManager.
     */
    @Override
    public void close() throws Exception {
      try {
        super.close();
      } catch (RuntimeException e) {
        LOG.warn("Closing the JDBC writer left its last batch unsent: {}", e.toString());
        // Flink's writer throws before it closes its connection; a restart loop would keep them.
        connections.closeConnection();
      }
    }

    private void send() throws IOException, InterruptedException {
      if (pending.isEmpty()) {
        return;
      }
      for (T row : pending.values()) {
        super.write(row, null);
      }
      pending.clear();
      super.flush(false);
    }
  }
}
