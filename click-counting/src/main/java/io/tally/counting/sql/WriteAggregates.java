package io.tally.counting.sql;

import io.tally.counting.records.AggregateRow;
import io.tally.counting.records.DeadLetter;
import io.tally.counting.records.DimensionCount;
import io.tally.counting.records.KeptValues;
import io.tally.counting.records.LedgerMark;
import io.tally.counting.records.MinuteCount;
import io.tally.counting.records.PeriodTotals;
import java.io.IOException;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.connector.jdbc.JdbcConnectionOptions;
import org.apache.flink.connector.jdbc.datasource.connections.JdbcConnectionProvider;
import org.apache.flink.connector.jdbc.datasource.connections.SimpleJdbcConnectionProvider;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.BoundedOneInput;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.util.OutputTag;

/**
 * Writes the rows of {@code click_counts}, {@code click_hourly}, {@code click_daily}, {@code
 * click_dimensions_hourly} and {@code click_dimensions_daily} (or reconciliation's staging tables)
 * in batches, one transaction per batch for all five: a checkpoint waits for one commit, not five,
 * and a reader never sees an hour that its minutes do not add up to yet. Its output is the rows
 * PostgreSQL refused, as dead letters.
 *
 * <p>Every row is a whole total written by an upsert that never lowers it ({@link
 * ClickCountUpsert}, {@link AggregateUpserts}), so the writer is at least once: a batch is sent
 * when it holds {@code batchSize} rows, at the end of each round of the counting's writes ({@link
 * AggregateRow#END_OF_ROUND}), {@code flushInterval} after its first row, and before every
 * checkpoint barrier, and a batch sent again after a failure or a restore changes nothing. A batch
 * keeps only the last row of each key: PostgreSQL refuses an {@code INSERT ... ON CONFLICT DO
 * UPDATE} that meets one key twice, which is what the JDBC driver's {@code
 * reWriteBatchedInserts=true} makes of a batch, and the last total says all the earlier ones did.
 * The writer turns that rewrite on for its own connection: a batch of each table then goes to
 * PostgreSQL as a few multi-row statements instead of one statement per row.
 *
 * <p>A breakdown's {@link KeptValues} clears the breakdown's other rows before the rows of the same
 * batch are written, so that rows of values it no longer keeps (written by an earlier run, by this
 * one before a restore, or before a value of less rank displaced them) cannot make it add up to
 * more than its clicks. Rows of that breakdown already in the batch are dropped with it: the whole
 * breakdown follows it, and an older row of a displaced value would otherwise be written back.
 *
 * <p>The row of a minute, hour or day recounted whole after a start without state replaces the
 * stored one whether lower or not ({@link AggregateRow#replaces}); these go before the upserts that
 * never lower a row, so that later totals of the same period in the batch still raise it.
 *
 * <p>A row PostgreSQL refuses as data never stops the job ({@link UpsertBatch}): the rest of its
 * batch is written in the same transaction, a refused breakdown value's clicks go to its stand-in
 * under {@code (other)}, and the refused row leaves as a {@link DeadLetter#REFUSED_ROW} letter, and
 * as a mark for its link's ledger on {@link #REFUSED_ROWS}. A database that does not answer is
 * retried, {@code maxRetries} times on a new connection, and then fails the job, which restarts
 * from its last checkpoint: the clicks wait in Kafka meanwhile.
 */
public final class WriteAggregates extends AbstractStreamOperator<DeadLetter>
    implements OneInputStreamOperator<AggregateRow, DeadLetter>, BoundedOneInput {

  /** Each refused row's link and period, for the link's ledger. */
  public static final OutputTag<LedgerMark> REFUSED_ROWS =
      new OutputTag<>("refused-rows", TypeInformation.of(LedgerMark.class));

  private final JdbcConnectionOptions connection;
  private final AggregateTables tables;
  private final int batchSize;
  private final long flushIntervalMillis;
  private final int maxRetries;

  private transient UpsertBatch batch;
  private transient UpsertBatch.Rows<MinuteCount> minutes;
  private transient UpsertBatch.Rows<PeriodTotals> hours;
  private transient UpsertBatch.Rows<PeriodTotals> days;
  private transient UpsertBatch.Rows<PeriodTotals> dayTotals;
  private transient UpsertBatch.Rows<DimensionCount> dimensions;
  private transient UpsertBatch.Rows<DimensionCount> dayDimensions;
  private transient UpsertBatch.Rows<KeptValues> hourKept;
  private transient UpsertBatch.Rows<KeptValues> dayKept;
  private transient UpsertBatch.Rows<MinuteCount> replacingMinutes;
  private transient UpsertBatch.Rows<PeriodTotals> replacingHours;
  private transient UpsertBatch.Rows<PeriodTotals> replacingDays;
  private transient BatchSchedule schedule;
  private transient JdbcConnectionProvider connections;
  private transient int pending;
  private transient Counter refusedRows;
  private transient Counter setAsideRows;

  /**
   * @param batchSize rows (after keeping the last of each key) per batch
   * @param flushInterval longest time a row waits before its batch is sent
   * @param maxRetries attempts after a batch the database did not take, each on a new connection
   */
  public WriteAggregates(
      JdbcConnectionOptions connection,
      AggregateTables tables,
      int batchSize,
      Duration flushInterval,
      int maxRetries) {
    this.connection = connection;
    this.tables = tables;
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
  public void open() throws Exception {
    super.open();
    batch = new UpsertBatch();
    // Before the upserts that never lower a row: a period recounted whole is replaced first, then
    // only raised.
    replacingMinutes = optional(tables.replacingMinutes());
    replacingHours = optional(tables.replacingHours());
    replacingDays = optional(tables.replacingDays());
    minutes = batch.table(tables.minutes());
    hours = batch.table(tables.hours());
    days = batch.table(tables.days());
    // After the days with their sketches: both raise a day's totals, in either order.
    dayTotals = optional(tables.dayTotals());
    // Before the breakdowns' rows: a breakdown is cleared, then written whole.
    hourKept = optional(tables.hourKept());
    dayKept = optional(tables.dayKept());
    dimensions = batch.table(tables.dimensions());
    dayDimensions = batch.table(tables.dayDimensions());
    connections = new SimpleJdbcConnectionProvider(rewritingBatches(connection));
    schedule =
        new BatchSchedule(getProcessingTimeService(), batchSize, flushIntervalMillis, this::send);
    refusedRows = getMetricGroup().counter("refusedRows");
    setAsideRows = getMetricGroup().counter("refusedRowsSetAside");
  }

  @Override
  public void processElement(StreamRecord<AggregateRow> element) throws Exception {
    AggregateRow row = element.getValue();
    if (row.endsRound()) {
      send();
      return;
    }
    boolean added;
    if (row.replaces()) {
      if (row.minute() != null) {
        added = present(replacingMinutes).add(row.minute());
      } else if (row.hour() != null) {
        added = present(replacingHours).add(row.hour());
      } else {
        added = present(replacingDays).add(row.day());
      }
    } else if (row.minute() != null) {
      added = minutes.add(row.minute());
    } else if (row.hour() != null) {
      added = hours.add(row.hour());
    } else if (row.day() != null) {
      added = row.day().sketchKept() ? present(dayTotals).add(row.day()) : days.add(row.day());
    } else if (row.dimension() != null) {
      added = dimensions.add(row.dimension());
    } else if (row.dayDimension() != null) {
      added = dayDimensions.add(row.dayDimension());
    } else if (row.hourKept() != null) {
      pending -= dimensions.removeIf(row.hourKept()::clears);
      added = present(hourKept).add(row.hourKept(), KeptValues::and);
    } else {
      pending -= dayDimensions.removeIf(row.dayKept()::clears);
      added = present(dayKept).add(row.dayKept(), KeptValues::and);
    }
    if (added) {
      pending++;
    }
    schedule.added(pending);
  }

  /** The batch's rows of {@code table}, null when these tables have none. */
  private <T> UpsertBatch.Rows<T> optional(UpsertTable<T> table) {
    return table == null ? null : batch.table(table);
  }

  private <T> UpsertBatch.Rows<T> present(UpsertBatch.Rows<T> rows) {
    if (rows == null) {
      throw new IllegalStateException("these tables take no such rows: " + tables);
    }
    return rows;
  }

  @Override
  public void prepareSnapshotPreBarrier(long checkpointId) throws Exception {
    super.prepareSnapshotPreBarrier(checkpointId);
    send();
  }

  @Override
  public void endInput() throws Exception {
    send();
  }

  private void send() throws IOException, InterruptedException {
    if (pending > 0) {
      for (UpsertBatch.Refused refused : write()) {
        refusedRows.inc();
        LOG.warn(
            "{} refused a row ({}); it goes to the dead letters",
            refused.table(),
            refused.reason());
        output.collect(
            new StreamRecord<>(
                DeadLetter.refusedRow(
                    refused.table(),
                    refused.reason(),
                    refused.stoodIn(),
                    RowJson.of((Record) refused.row()))));
        output.collect(REFUSED_ROWS, new StreamRecord<>(LedgerMark.refusedRow(refused.row())));
      }
    }
    pending = 0;
    setAsideRows.inc(batch.takeSetAside());
  }

  private List<UpsertBatch.Refused> write() throws IOException, InterruptedException {
    for (int attempt = 0; ; attempt++) {
      try {
        Connection db = connections.getOrEstablishConnection();
        return batch.write(db);
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
  }

  @Override
  public void close() throws Exception {
    if (connections != null) {
      connections.closeConnection();
    }
    super.close();
  }
}
