package io.tally.clickjob.records;

/**
 * The part of a click event that counting needs. The job carries this instead of the whole event so
 * that state and network shuffles hold only what they use.
 *
 * @param clickId the click's id, as text
 * @param code the link code, the key of every keyed operator
 * @param ts event time, epoch milliseconds
 * @param bot whether the click came from a crawler, a preview fetcher or a HEAD request
 */
public record Click(String clickId, String code, long ts, boolean bot) {}
