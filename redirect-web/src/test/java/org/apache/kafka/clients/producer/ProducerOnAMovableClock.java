package org.apache.kafka.clients.producer;

import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.apache.kafka.clients.ApiVersions;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.Utils;

/**
 * A real {@link KafkaProducer} whose clock a test can move forward, for behaviour that takes
 * minutes of producer time (how long a quiet topic's metadata is kept). Kafka passes its clock only
 * through a package-private constructor, hence this package.
 */
public final class ProducerOnAMovableClock {

  private ProducerOnAMovableClock() {}

  /** The system clock plus however far {@link #advance} has moved it. */
  public static final class MovableTime implements Time {
    private final AtomicLong aheadMillis = new AtomicLong();

    /** Moves the producer's time forward; its I/O thread sees the jump on its next loop. */
    public void advance(Duration by) {
      aheadMillis.addAndGet(by.toMillis());
    }

    @Override
    public long milliseconds() {
      return System.currentTimeMillis() + aheadMillis.get();
    }

    @Override
    public long nanoseconds() {
      return System.nanoTime() + aheadMillis.get() * 1_000_000L;
    }

    @Override
    public void sleep(long ms) {
      Utils.sleep(ms);
    }

    @Override
    public void waitObject(Object obj, Supplier<Boolean> condition, long deadlineMs)
        throws InterruptedException {
      synchronized (obj) {
        while (!condition.get()) {
          long now = milliseconds();
          if (now >= deadlineMs) {
            throw new TimeoutException("Condition not satisfied before deadline");
          }
          obj.wait(deadlineMs - now);
        }
      }
    }
  }

  /**
   * A producer with {@code properties} (serializers included) that reads the time from {@code
   * time}.
   */
  public static <K, V> KafkaProducer<K, V> create(Properties properties, MovableTime time) {
    ProducerConfig config =
        new ProducerConfig(
            ProducerConfig.appendSerializerToConfig(Utils.propsToMap(properties), null, null));
    return new KafkaProducer<>(config, null, null, null, null, null, new ApiVersions(), time);
  }
}
