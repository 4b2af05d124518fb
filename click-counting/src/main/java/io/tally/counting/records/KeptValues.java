package io.tally.counting.records;

import java.util.Arrays;
import java.util.List;

/**
 * The values a full dimension of one link's hour or UTC day keeps ({@link
 * io.tally.counting.periods.ClickTally}): every other row of that breakdown, {@link
 * DimensionCount#OTHER} included, is deleted before the breakdown's rows are written again. The
 * streaming job sends these the first time it writes a full breakdown after a start or restore, and
 * whenever a value of less rank displaced a kept one: rows of values no longer kept, which the
 * upserts never lower, would otherwise make the breakdown add up to more than its clicks.
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

  /** Whether {@code row} is a row of the breakdown this clears. */
  public boolean clears(DimensionCount row) {
    return row.periodStart() == periodStart
        && row.code().equals(code)
        && row.dimension().equals(dimension);
  }

  /**
   * What a breakdown keeps when this clearing and a later one of it meet in one batch: the values
   * both keep. The later one alone would spare rows this one was sent to delete (a period recounted
   * whole keeps none of the earlier run's); deleting more is harmless, since the breakdown's rows
   * are all sent again after each.
   */
  public KeptValues and(KeptValues later) {
    List<String> both = Arrays.asList(values);
    return new KeptValues(
        code,
        periodStart,
        dimension,
        Arrays.stream(later.values).filter(both::contains).toArray(String[]::new));
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
