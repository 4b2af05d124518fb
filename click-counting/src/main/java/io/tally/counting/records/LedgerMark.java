package io.tally.counting.records;

import java.time.Duration;

/**
 * A click or row the job set aside instead of counting, on its way to the link's audit ledger:
 * which link it names, the instant it belongs to, and why it was set aside.
 *
 * @param code the link's code
 * @param ts the click's time, or the start of a refused row's period
 * @param kind why it was set aside
 */
public record LedgerMark(String code, long ts, Kind kind) {

  private static final long HOUR = Duration.ofHours(1).toMillis();

  /** Why a click or row was set aside; each is a column of {@code link_ledger_hourly}. */
  public enum Kind {
    /** A copy of a click already counted. */
    DUPLICATE,
    /** A click that came after its minute closed for good; a dead letter. */
    LATE,
    /** A row PostgreSQL refused to store; a dead letter. */
    REFUSED_ROW
  }

  /** Marks a click. */
  public static LedgerMark of(Click click, Kind kind) {
    return new LedgerMark(click.code(), click.ts(), kind);
  }

  /**
   * Marks a row PostgreSQL refused: any row of the aggregate tables names its link and period.
   *
   * @throws IllegalArgumentException for an object that is no such row
   */
  public static LedgerMark refusedRow(Object row) {
    if (row instanceof MinuteCount m) {
      return new LedgerMark(m.code(), m.minuteStart(), Kind.REFUSED_ROW);
    } else if (row instanceof PeriodTotals t) {
      return new LedgerMark(t.code(), t.periodStart(), Kind.REFUSED_ROW);
    } else if (row instanceof DimensionCount d) {
      return new LedgerMark(d.code(), d.periodStart(), Kind.REFUSED_ROW);
    } else if (row instanceof KeptValues k) {
      return new LedgerMark(k.code(), k.periodStart(), Kind.REFUSED_ROW);
    }
    throw new IllegalArgumentException("not a row of the aggregate tables: " + row);
  }

  /** The start of the UTC hour the mark belongs to. */
  public long hourStart() {
    return Math.floorDiv(ts, HOUR) * HOUR;
  }
}
