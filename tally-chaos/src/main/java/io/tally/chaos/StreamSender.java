package io.tally.chaos;

import io.tally.event.ClickEvent;
import io.tally.event.ClickRecords;
import io.tally.testing.ClickOracle;
import io.tally.testing.ClickStream;
import org.apache.kafka.clients.producer.Producer;

/** Sending a generated stream: where its clicks sit in time, and sending at a steady rate. */
final class StreamSender {

  private StreamSender() {}

  /**
   * The start of the data of generated-stream scenarios: an hour two days back, so that every
   * minute, hour and day of the data is closed once the watermark passes it, and reconcile may
   * repair any of them.
   */
  static long dataStart(long now) {
    return ClickOracle.floor(now - 2 * ClickOracle.DAY, ClickOracle.HOUR);
  }

  static void send(Producer<String, byte[]> producer, ClickEvent click) {
    producer.send(ClickRecords.of(ChaosStack.CLICKS, click));
  }

  /**
   * Sends every delivery of {@code stream}, at most {@code perSecond} a second (0: as fast as the
   * producer takes them), calling {@code every} after each fraction 1/{@code steps} of the stream.
   */
  static void sendAll(
      Producer<String, byte[]> producer,
      ClickStream stream,
      long total,
      int perSecond,
      int steps,
      StepAction every)
      throws Exception {
    long start = System.nanoTime();
    long step = Math.max(1, total / Math.max(1, steps));
    while (stream.hasNext()) {
      send(producer, stream.next());
      long sent = stream.delivered();
      if (perSecond > 0 && sent % 100 == 0) {
        long due = start + sent * 1_000_000_000L / perSecond;
        long wait = due - System.nanoTime();
        if (wait > 0) {
          Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
        }
      }
      if (sent % step == 0 && sent < total) {
        every.after(sent);
      }
    }
    producer.flush();
  }

  /** What to do at each step of a send. */
  interface StepAction {
    void after(long sent) throws Exception;
  }
}
