package io.tally.clickjob.io;

import io.tally.counting.records.RawClick;
import java.time.Duration;
import org.apache.flink.api.common.eventtime.Watermark;
import org.apache.flink.api.common.eventtime.WatermarkGenerator;
import org.apache.flink.api.common.eventtime.WatermarkOutput;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.util.clock.RelativeClock;

/**
 * Bounded-out-of-orderness watermarks that follow the wall clock when a partition goes quiet.
 *
 * <p>While clicks arrive, the watermark trails the newest click by the out-of-orderness bound. When
 * a partition has seen nothing for the idle timeout, its watermark moves to {@code now -
 * outOfOrderness - idleTimeout}: clicks are stamped when they happen and reach Kafka within
 * seconds, so nothing older is still on its way (anything that is becomes late data). Without this,
 * a quiet stream would hold the last minute's count back forever.
 *
 * <p>Quiet is judged on Flink's input activity clock, not the wall clock: that clock stops while
 * the source does not read because the job is backpressured (a sink waiting for PostgreSQL, a slow
 * operator) or paused, so a partition whose clicks wait in Kafka behind a stalled job is never
 * taken for a quiet one, however long the stall. The wall clock only says where a quiet partition's
 * watermark goes.
 *
 * <p>A record stamped later than the wall clock counts as stamped now: the watermark never passes
 * the wall clock minus the out-of-orderness.
 *
 * <p>Two cases must not follow the clock, or the rest of a backlog becomes late data:
 *
 * <ul>
 *   <li>A partition replaying old clicks can go without records for a while when the job is
 *       backpressured and its source stops reading. So the idle timeout applies only to a partition
 *       whose newest click was live, stamped at most {@code outOfOrderness + idleTimeout} before it
 *       was read; a partition that was reading old clicks must be quiet {@value #STALE_IDLE_FACTOR}
 *       times as long.
 *   <li>A generator that has seen no record at all only marks its output idle, which leaves it out
 *       of the minimum without moving anything forward. Flink also gives the source reader's main
 *       output a generator of this strategy; that one never sees a record (the Kafka source emits
 *       through per-partition outputs), yet its watermarks bypass the per-partition minimum. Were
 *       it to follow the clock, every source subtask would jump to the wall clock one idle timeout
 *       after start, and a replay of old clicks would go almost wholly to the dead letters as late.
 * </ul>
 *
 * The price of the second: after a restart into a stream with no clicks at all, a minute left open
 * in state waits for the next click before it is written. And a partition left out as idle does not
 * hold the others back: old clicks written into it later (a backfill into a quiet topic) can be
 * late.
 */
public final class WallClockWatermarks<T> implements WatermarkGenerator<T> {

  /**
   * How much longer a partition that was replaying old clicks must be quiet before it follows the
   * clock.
   */
  public static final int STALE_IDLE_FACTOR = 10;

  private final long outOfOrderness;
  private final long idleTimeout;
  private final Clock clock;
  private final RelativeClock activity;
  private long maxTimestamp = Long.MIN_VALUE;
  private long lastEventAt;
  private long lastEventActivity;
  private boolean newestWasLive = true;
  private long emitted = Long.MIN_VALUE;

  /** Where the generator reads the time; a test drives it by hand. */
  public interface Clock extends java.io.Serializable {
    long millis();
  }

  /**
   * @param clock the wall clock, where a quiet partition's watermark goes
   * @param activity the source's input activity clock, which stops while the source is
   *     backpressured or paused; quiet time is measured on it
   */
  public WallClockWatermarks(
      Duration outOfOrderness, Duration idleTimeout, Clock clock, RelativeClock activity) {
    this.outOfOrderness = outOfOrderness.toMillis();
    this.idleTimeout = idleTimeout.toMillis();
    this.clock = clock;
    this.activity = activity;
    this.lastEventAt = clock.millis();
    this.lastEventActivity = activity.relativeTimeMillis();
  }

  /**
   * The strategy for the click topic, applied per partition inside the Kafka source. Event time is
   * the Kafka record timestamp, which every producer of click events sets to the click's {@code ts}
   * (see {@code io.tally.event.ClickRecords}), so no record is parsed twice.
   */
  public static WatermarkStrategy<RawClick> strategy(
      Duration outOfOrderness, Duration idleTimeout) {
    return WatermarkStrategy.forGenerator(
        ctx ->
            new WallClockWatermarks<>(
                outOfOrderness,
                idleTimeout,
                System::currentTimeMillis,
                ctx.getInputActivityClock()));
  }

  @Override
  public void onEvent(T record, long eventTimestamp, WatermarkOutput output) {
    lastEventAt = clock.millis();
    lastEventActivity = activity.relativeTimeMillis();
    // Records are seen here before they are parsed: one stamped in the future (a producer's clock
    // ahead, or a malformed record) must not carry the watermark past now and make every real click
    // late.
    maxTimestamp = Math.max(maxTimestamp, Math.min(eventTimestamp, lastEventAt));
    newestWasLive = lastEventAt - maxTimestamp <= outOfOrderness + idleTimeout;
  }

  @Override
  public void onPeriodicEmit(WatermarkOutput output) {
    long now = clock.millis();
    long watermark =
        maxTimestamp == Long.MIN_VALUE ? Long.MIN_VALUE : maxTimestamp - outOfOrderness - 1;
    long quietFor = newestWasLive ? idleTimeout : idleTimeout * STALE_IDLE_FACTOR;
    if (activity.relativeTimeMillis() - lastEventActivity >= quietFor) {
      if (maxTimestamp == Long.MIN_VALUE) {
        output.markIdle();
        return;
      }
      watermark = Math.max(watermark, now - outOfOrderness - idleTimeout);
    }
    if (watermark > emitted) {
      emitted = watermark;
      output.emitWatermark(new Watermark(watermark));
    }
  }
}
