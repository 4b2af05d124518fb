package io.tally.bench.pipeline;

import io.tally.bench.support.Histograms;
import io.tally.local.LocalServices;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.HdrHistogram.Histogram;

/** How soon live clicks become visible in PostgreSQL: per closed minute, and per click sent. */
final class LiveLatency {

  /**
   * What the live phase measured.
   *
   * @param lags per minute that ended while watched, seconds from its end until its count was
   *     complete
   * @param clickToVisible click-to-visible latencies, in nanoseconds
   */
  record Result(Map<Long, Double> lags, Histogram clickToVisible) {}

  private LiveLatency() {}

  /**
   * Polls the live codes' counts for {@code duration}; returns, per minute that ended meanwhile,
   * the seconds from its end until its count in PostgreSQL was complete.
   */
  static Result measure(LocalServices stack, LiveClicks live, Duration duration) throws Exception {
    Map<Long, Double> lags = new TreeMap<>();
    long startedAt = System.currentTimeMillis();
    long end = startedAt + duration.toMillis();
    List<long[]> visible = new ArrayList<>();
    try (Connection c = stack.connect();
        Statement s = c.createStatement()) {
      while (System.currentTimeMillis() < end) {
        try (ResultSet rs =
            s.executeQuery(
                "SELECT (extract(epoch from minute) * 1000)::bigint, sum(clicks + bot_clicks)"
                    + " FROM click_counts WHERE code LIKE '"
                    + LiveClicks.CODE_PREFIX
                    + "%' GROUP BY minute")) {
          long now = System.currentTimeMillis();
          long total = 0;
          while (rs.next()) {
            total += rs.getLong(2);
            long minute = rs.getLong(1);
            AtomicLong sent = live.perMinute().get(minute);
            // Only minutes that end while watched: an earlier one's completion time is not known.
            if (minute + 60_000 >= startedAt
                && sent != null
                && rs.getLong(2) == sent.get()
                && minute + 60_000 <= now
                && !lags.containsKey(minute)) {
              lags.put(minute, (now - (minute + 60_000)) / 1000.0);
            }
          }
          visible.add(new long[] {now, total});
        }
        Thread.sleep(100);
      }
    }
    return new Result(
        lags,
        clickToVisible(
            live.sentBy(), visible, startedAt, end - CLICK_TO_VISIBLE_MARGIN.toMillis()));
  }

  /**
   * Nothing sent in the last this-long of the live phase is timed: it may not have had time to
   * show.
   */
  private static final Duration CLICK_TO_VISIBLE_MARGIN = Duration.ofSeconds(15);

  /**
   * For each moment clicks left, how long until PostgreSQL held that many live clicks: the time
   * from a click to its count being readable by the stats API, with the job's early firings. Counts
   * grow in the order clicks were sent only roughly (partitions run independently), so this is the
   * time until as many clicks as had been sent are visible.
   */
  private static Histogram clickToVisible(
      List<long[]> sentBy, List<long[]> visible, long from, long until) {
    Histogram histogram = Histograms.newHistogram();
    int v = 0;
    for (long[] sent : sentBy) {
      if (sent[0] < from || sent[0] > until || sent[1] == 0) {
        continue;
      }
      while (v < visible.size() && (visible.get(v)[0] < sent[0] || visible.get(v)[1] < sent[1])) {
        v++;
      }
      if (v == visible.size()) {
        break;
      }
      Histograms.record(histogram, TimeUnit.MILLISECONDS.toNanos(visible.get(v)[0] - sent[0]));
    }
    return histogram;
  }
}
