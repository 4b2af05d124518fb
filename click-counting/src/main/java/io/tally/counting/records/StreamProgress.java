package io.tally.counting.records;

/**
 * How far the streaming job's event time has got in one of its runs: every minute before {@code
 * closedBefore} has had its on-time write. A run begins when the job starts without state, which
 * rewinds it to recount the open day, so a newer run's progress may be lower than an older run's.
 *
 * @param closedBefore end of the newest closed minute, epoch milliseconds
 * @param runStartedAt when the run started without state, epoch milliseconds; 0 for a run that
 *     began before runs were told apart
 */
public record StreamProgress(long closedBefore, long runStartedAt) {}
