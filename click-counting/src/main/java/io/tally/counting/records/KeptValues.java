package io.tally.counting.records;

import java.util.Arrays;
import java.util.List;

/**
 * The values a full dimension of one link's hour or UTC day keeps ({@link
 * io.tally.counting.periods.ClickTally}), sent once it is full and so final: every other row of
 * that breakdown, {@link DimensionCount#OTHER} included, is deleted before the breakdown's rows are
 * written again. Only a job that started without state sends these, for periods an earlier run may
 * have written: that run may have kept other values, and the upserts, which never lower a row,
 * would leave its rows beside the new ones, so that the breakdown added up to more than its clicks.
 *
 * @param code link code
 * @param periodStart start of the hour or day, epoch milliseconds
 * @param dimension the dimension's name
 * @param values the kept values, {@link DimensionCount#OTHER} left out (the rows that stand in for
 *     any that PostgreSQL refused, {@link DimensionCount#standIn}, are kept too)
 */
public record KeptValues(String code, long periodStart, String dimension, String[] values) {

  /** The breakdown whose rows this clears: one statement's key. */
  public List<Object> key() {
    return List.of(code, periodStart, dimension);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof KeptValues k
        && k.code.equals(code)
        && k.periodStart == periodStart
        && k.dimension.equals(dimension)
        && Arrays.equals(k.values, values);
  }

  @Override
  public int hashCode() {
    return key().hashCode() * 31 + Arrays.hashCode(values);
  }

  @Override
  public String toString() {
    return "KeptValues["
        + code
        + ", "
        + periodStart
        + ", "
        + dimension
        + ", "
        + Arrays.toString(values)
        + "]";
  }
}
