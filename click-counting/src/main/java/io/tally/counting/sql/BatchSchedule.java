package io.tally.counting.sql;

import java.io.IOException;
import org.apache.flink.api.common.operators.ProcessingTimeService;

/**
 * When a sink's batch goes out: once it holds {@code batchSize} rows, and at the latest {@code
 * flushInterval} after its first row. (Before every checkpoint too, which the sink's {@code flush}
 * does.)
 */
public final class BatchSchedule {

  /** Sends the batch. */
  public interface Send {
    void send() throws IOException, InterruptedException;
  }

  private final ProcessingTimeService timers;
  private final int batchSize;
  private final long flushIntervalMillis;
  private final Send send;
  private boolean scheduled;

  public BatchSchedule(
      ProcessingTimeService timers, int batchSize, long flushIntervalMillis, Send send) {
    if (batchSize < 1) {
      throw new IllegalArgumentException("batchSize must be at least 1, not " + batchSize);
    }
    this.timers = timers;
    this.batchSize = batchSize;
    this.flushIntervalMillis = flushIntervalMillis;
    this.send = send;
  }

  /** Called after a row was added to a batch that now holds {@code pending} rows. */
  public void added(int pending) throws IOException, InterruptedException {
    if (pending >= batchSize) {
      send.send();
    } else if (!scheduled) {
      scheduled = true;
      timers.registerTimer(
          timers.getCurrentProcessingTime() + flushIntervalMillis,
          time -> {
            scheduled = false;
            send.send();
          });
    }
  }
}
