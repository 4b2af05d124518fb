package io.tally.clickjob.functions;

import io.tally.counting.functions.Downtime;
import io.tally.counting.records.LedgerMark;
import io.tally.counting.records.LedgerMark.Kind;
import io.tally.counting.records.LedgerRow;
import java.time.Duration;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

/**
 * Adds up what the job set aside per link and UTC hour (copies dropped, late clicks, refused rows)
 * and sends the hour's whole totals on each change; the writer keeps the last totals of a key per
 * batch, so a burst of copies costs one row. Keyed by (link, hour), the totals live in keyed state
 * and so survive restarts and rescaling like the counts; an hour is forgotten {@code forgetAfter}
 * of the job's running time after its last mark ({@link Downtime}: a stop does not count), which
 * the job sets past the time the dedup remembers the hour's clicks. Whole totals written by an
 * upsert that never lowers them make a replay harmless, and an hour forgotten and marked again
 * cannot lower what was stored.
 */
public class CountLedgerMarks
    extends KeyedProcessFunction<Tuple2<String, Long>, LedgerMark, LedgerRow>
    implements CheckpointedFunction {

  /** The key: the link and the hour its mark belongs to. */
  public static final KeySelector<LedgerMark, Tuple2<String, Long>> KEY =
      mark -> Tuple2.of(mark.code(), mark.hourStart());

  public static final TypeInformation<Tuple2<String, Long>> KEY_TYPE =
      Types.TUPLE(Types.STRING, Types.LONG);

  private final Duration forgetAfter;
  private transient ValueState<long[]> totals;
  private transient Downtime downtime;

  public CountLedgerMarks(Duration forgetAfter) {
    this.forgetAfter = forgetAfter;
  }

  @Override
  public void initializeState(FunctionInitializationContext context) throws Exception {
    long now = Downtime.now(getRuntimeContext());
    downtime =
        Downtime.restore(
            context.getOperatorStateStore(), "ledger", context.isRestored(), now, forgetAfter);
  }

  @Override
  public void snapshotState(FunctionSnapshotContext context) throws Exception {
    downtime.snapshot(Downtime.now(getRuntimeContext()));
  }

  @Override
  public void open(OpenContext openContext) {
    ValueStateDescriptor<long[]> descriptor =
        new ValueStateDescriptor<>("ledger", PrimitiveArrayTypeInfo.LONG_PRIMITIVE_ARRAY_TYPE_INFO);
    descriptor.enableTimeToLive(downtime.expiringAfterWrite(forgetAfter));
    totals = getRuntimeContext().getState(descriptor);
  }

  @Override
  public void processElement(LedgerMark mark, Context ctx, Collector<LedgerRow> out)
      throws Exception {
    // One total per kind, by the kind's ordinal.
    long[] hour = totals.value();
    if (hour == null) {
      hour = new long[Kind.values().length];
    }
    hour[mark.kind().ordinal()]++;
    totals.update(hour);
    Tuple2<String, Long> key = ctx.getCurrentKey();
    out.collect(
        new LedgerRow(
            key.f0,
            key.f1,
            hour[Kind.DUPLICATE.ordinal()],
            hour[Kind.LATE.ordinal()],
            hour[Kind.REFUSED_ROW.ordinal()]));
  }
}
