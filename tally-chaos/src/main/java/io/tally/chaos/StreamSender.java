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
   * producer takes them), calling {@code each} after each; returns how many were sent.
   */
  static long sendAll(
      Producer<String, byte[]> producer, ClickStream stream, int perSecond, AfterEach each)
      throws Exception {
    long start = System.nanoTime();
    while (stream.hasNext()) {
      ClickEvent click = stream.next();
      send(producer, click);
      pace(start, stream.delivered(), perSecond);
      each.after(click, stream.delivered());
    }
    producer.flush();
    return stream.delivered();
  }

  /**
   * Every hundredth click, waits until the {@code sent}th is due at {@code perSecond} a second (0:
   * never) from {@code start} ({@link System#nanoTime()}).
   */
  static void pace(long start, long sent, int perSecond) throws InterruptedException {
    if (perSecond > 0 && sent % 100 == 0) {
      long wait = start + sent * 1_000_000_000L / perSecond - System.nanoTime();
      if (wait > 0) {
        Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
      }
    }
  }

  /** What to do after each click sent, the {@code sent}th of the stream. */
  interface AfterEach {
    void after(ClickEvent click, long sent) throws Exception;
  }
}
