package io.tally.reconcile.functions;

import io.tally.counting.functions.VisitorHours;
import io.tally.counting.periods.LinkPeriods;
import io.tally.counting.records.Click;
import io.tally.counting.records.DimensionCount;
import io.tally.counting.records.KeptValues;
import io.tally.counting.records.MinuteCount;
import io.tally.counting.records.PeriodRows;
import io.tally.counting.records.PeriodTotals;
import io.tally.counting.records.RecountKey;
import io.tally.counting.records.VisitorDay;
import org.apache.flink.api.common.accumulators.LongCounter;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.BoundedOneInput;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.util.OutputTag;

/**
 * Recounts links from a bounded replay of their clicks in one pass over one sort: keyed by {@link
 * #KEY} in BATCH mode, it receives each link's clicks together, each visitor's day together inside
 * them in time order, and the copies of a click side by side. So it drops every copy after the
 * first, marks a person's first click on the link in each hour and day ({@link VisitorHours}, the
 * streaming job's own rule), adds each click into the link's minutes, hours and days with the
 * streaming job's own {@link LinkPeriods}, and writes every period's rows when the link's clicks
 * end: minutes as the main output, hours, days and hourly and daily breakdowns to {@link #HOURS},
 * {@link #DAYS}, {@link #DIMENSIONS} and {@link #DAY_DIMENSIONS}, each for its own staging table.
 *
 * <p>It holds one link's periods, one visitor's hours of a day and the last click's key, in fields
 * rather than keyed state, because they span keys: BATCH mode keeps keyed state for one key at a
 * time. Its memory grows with the range, not with a link's clicks.
 *
 * <p>A copy is a record with the link, visitor, day, time and id of the click before it. The
 * streaming job keys its dedup by the id alone. Within one recount the copies of a click are the
 * same bytes, parsed and classified alike, so they have one key; the two differ only for records
 * that reuse an id with other content, which no producer of Tally's makes, and which the recount
 * counts as the distinct clicks they claim to be.
 */
public class RecountLinks extends AbstractStreamOperator<MinuteCount>
    implements OneInputStreamOperator<Click, MinuteCount>, BoundedOneInput {

  public static final OutputTag<PeriodTotals> HOURS = new OutputTag<>("hour-totals") {};
  public static final OutputTag<PeriodTotals> DAYS = new OutputTag<>("day-totals") {};
  public static final OutputTag<DimensionCount> DIMENSIONS = new OutputTag<>("dimension-counts") {};
  public static final OutputTag<DimensionCount> DAY_DIMENSIONS =
      new OutputTag<>("day-dimension-counts") {};

  /** The key that sorts a link's clicks together ({@link RecountKey}). */
  public static final KeySelector<Click, RecountKey> KEY = RecountLinks::keyOf;

  private final int maxDimensionValues;
  private final String distinctClicksAccumulator;
  private transient LongCounter distinctClicks;
  private transient RecountKey previous;
  private transient LinkPeriods link;
  private transient int hoursSeen;

  /**
   * @param maxDimensionValues values kept per hour and dimension ({@link
   *     io.tally.counting.CountingOptions})
   * @param distinctClicksAccumulator the accumulator that counts the clicks left after the dedup
   */
  public RecountLinks(int maxDimensionValues, String distinctClicksAccumulator) {
    this.maxDimensionValues = maxDimensionValues;
    this.distinctClicksAccumulator = distinctClicksAccumulator;
  }

  static RecountKey keyOf(Click click) {
    long idHigh = click.clickId().getMostSignificantBits();
    long idLow = click.clickId().getLeastSignificantBits();
    if (!VisitorHours.counts(click)) {
      return new RecountKey(click.code(), false, 0, 0, 0, click.ts(), idHigh, idLow);
    }
    VisitorDay day =
        VisitorDay.of(click, Math.toIntExact(Math.floorDiv(click.ts(), LinkPeriods.DAY)));
    return new RecountKey(
        day.code(),
        true,
        day.visitorHigh(),
        day.visitorLow(),
        day.day(),
        click.ts(),
        idHigh,
        idLow);
  }

  @Override
  public void open() throws Exception {
    super.open();
    distinctClicks = getRuntimeContext().getLongCounter(distinctClicksAccumulator);
  }

  @Override
  public void processElement(StreamRecord<Click> element) {
    RecountKey key = (RecountKey) getCurrentKey();
    if (key.equals(previous)) {
      return;
    }
    if (previous == null || !key.sameLink(previous)) {
      writeLink();
      link = new LinkPeriods();
    }
    Click click = element.getValue();
    if (key.person()) {
      if (previous == null || !key.sameVisitorDay(previous)) {
        hoursSeen = 0;
      }
      click = VisitorHours.mark(click, click.ts(), hoursSeen);
      if (click.newVisitorInHour()) {
        hoursSeen |= VisitorHours.bit(click.ts());
      }
    }
    previous = key;
    distinctClicks.add(1L);
    link.add(LinkPeriods.minuteOf(click.ts()), click, maxDimensionValues);
  }

  @Override
  public void endInput() {
    writeLink();
  }

  private void writeLink() {
    if (link == null) {
      return;
    }
    link.writeAllChanges(previous.code(), new StagingRows());
    link = null;
  }

  /** Each period's rows to the output of its staging table. */
  private final class StagingRows implements PeriodRows {

    @Override
    public void minute(MinuteCount row) {
      output.collect(new StreamRecord<>(row));
    }

    @Override
    public void hour(PeriodTotals row) {
      output.collect(HOURS, new StreamRecord<>(row));
    }

    @Override
    public void day(PeriodTotals row) {
      output.collect(DAYS, new StreamRecord<>(row));
    }

    @Override
    public void dimension(DimensionCount row) {
      output.collect(DIMENSIONS, new StreamRecord<>(row));
    }

    @Override
    public void dayDimension(DimensionCount row) {
      output.collect(DAY_DIMENSIONS, new StreamRecord<>(row));
    }

    // The recount writes fresh staging tables, which no earlier run wrote.
    @Override
    public void keptInHour(KeptValues kept) {
      throw new IllegalStateException("a recount never clears a breakdown: " + kept);
    }

    @Override
    public void keptInDay(KeptValues kept) {
      throw new IllegalStateException("a recount never clears a breakdown: " + kept);
    }

    @Override
    public void recountedMinute(MinuteCount row) {
      throw new IllegalStateException("a recount never replaces a row: " + row);
    }

    @Override
    public void recountedHour(PeriodTotals row) {
      throw new IllegalStateException("a recount never replaces a row: " + row);
    }

    @Override
    public void recountedDay(PeriodTotals row) {
      throw new IllegalStateException("a recount never replaces a row: " + row);
    }
  }
}
