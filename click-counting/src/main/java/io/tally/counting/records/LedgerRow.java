package io.tally.counting.records;

/**
 * One row of {@code link_ledger_hourly}: how many of a link's clicks or rows of one UTC hour the
 * job set aside, by why, as whole totals.
 *
 * @param code the link's code
 * @param hourStart the hour's start, epoch milliseconds
 * @param duplicates copies dropped as duplicates
 * @param late clicks too late to count, dead-lettered
 * @param refusedRows rows PostgreSQL refused, dead-lettered
 */
public record LedgerRow(
    String code, long hourStart, long duplicates, long late, long refusedRows) {}
