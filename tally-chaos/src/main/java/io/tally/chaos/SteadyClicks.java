package io.tally.chaos;

import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One link clicked through redirect-web at a steady pace on a thread of its own, while a scenario
 * does its harm elsewhere: each answered click is timed until it shows ({@link Visibility}), and
 * the answers are counted by status. The table is read between clicks, every {@value #WATCH_MILLIS}
 * ms, so a wait is measured to about that.
 */
final class SteadyClicks implements AutoCloseable {

  private static final long WATCH_MILLIS = 100;

  private final Visibility visibility;
  private final Map<Integer, Long> byStatus = new TreeMap<>();
  private final AtomicBoolean clicking = new AtomicBoolean(true);
  private final ExecutorService thread = Executors.newSingleThreadExecutor();
  private final Future<?> loop;

  /**
   * Starts clicking {@code code} on redirect-web at {@code webPort} once every {@code period};
   * {@code alreadyCounted} of its clicks are in the table before the first.
   */
  SteadyClicks(ChaosStack stack, int webPort, String code, Duration period, long alreadyCounted) {
    visibility = new Visibility(stack, code, alreadyCounted);
    loop =
        thread.submit(
            () -> {
              long next = System.currentTimeMillis();
              while (clicking.get()) {
                long now = System.currentTimeMillis();
                if (now >= next) {
                  int status = RawHttp.get(webPort, "/" + code, RawHttp.BROWSER);
                  if (status == 302) {
                    visibility.sent(now);
                  }
                  synchronized (byStatus) {
                    byStatus.merge(status, 1L, Long::sum);
                  }
                  next += period.toMillis();
                }
                visibility.watch();
                Thread.sleep(WATCH_MILLIS);
              }
              return null;
            });
  }

  /**
   * Stops clicking, then watches until every answered click has shown or {@code patience} has
   * passed.
   */
  void stop(Duration patience) throws Exception {
    clicking.set(false);
    loop.get(30, TimeUnit.SECONDS);
    long deadline = System.nanoTime() + patience.toNanos();
    while (!visibility.allVisible() && System.nanoTime() < deadline) {
      Thread.sleep(WATCH_MILLIS);
      visibility.watch();
    }
  }

  Visibility visibility() {
    return visibility;
  }

  Map<Integer, Long> byStatus() {
    synchronized (byStatus) {
      return new TreeMap<>(byStatus);
    }
  }

  @Override
  public void close() {
    clicking.set(false);
    thread.shutdownNow();
  }
}
