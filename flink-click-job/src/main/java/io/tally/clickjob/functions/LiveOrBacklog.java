package io.tally.clickjob.functions;

/**
 * Tells live data from a backlog. Early writes exist so that clicks happening now show within
 * seconds; for a minute that ended more than {@link #LIVE_LAG_MILLIS} ago the job is catching up
 * (after an outage, a restart, a replay), nobody is watching it fill, and writing its partial
 * totals every few seconds only multiplied the rows PostgreSQL had to take (bench pipeline: a fifth
 * of the throughput).
 */
final class LiveOrBacklog {

  /** How far behind the wall clock a minute may end and still count as live. */
  static final long LIVE_LAG_MILLIS = 60_000;

  /**
   * How often every changed row is written: open hours and days with their breakdowns, live or not,
   * and a backlog's minutes.
   */
  static final long ALL_CHANGES_MILLIS = 30_000;

  private LiveOrBacklog() {}

  static boolean live(long minuteEnd, long processingTime) {
    return minuteEnd >= processingTime - LIVE_LAG_MILLIS;
  }

  /** The first multiple of {@code interval} at or after {@code time}. */
  static long ceil(long time, long interval) {
    return -Math.floorDiv(-time, interval) * interval;
  }
}
