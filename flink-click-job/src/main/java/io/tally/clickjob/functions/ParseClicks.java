package io.tally.clickjob.functions;

import io.tally.clickjob.records.Click;
import io.tally.clickjob.records.DeadLetter;
import io.tally.clickjob.records.RawClick;
import io.tally.event.ClickEvent;
import io.tally.event.ClickEventCodec;
import io.tally.event.Decoded;
import io.tally.event.MalformedReason;
import java.util.EnumMap;
import java.util.Map;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;

/**
 * Decodes and validates raw records with the contract's codec. Valid clicks go on; anything malformed
 * goes to the {@link #DEAD_LETTERS} side output with its reason and source offset. Never throws on data.
 */
public class ParseClicks extends ProcessFunction<RawClick, Click> {

  public static final OutputTag<DeadLetter> DEAD_LETTERS = new OutputTag<>("dead-letters") {};

  private transient Counter parsed;
  private transient Map<MalformedReason, Counter> deadLettered;

  @Override
  public void open(OpenContext openContext) {
    parsed = getRuntimeContext().getMetricGroup().counter("clicksParsed");
    deadLettered = new EnumMap<>(MalformedReason.class);
    for (MalformedReason reason : MalformedReason.values()) {
      deadLettered.put(
          reason, getRuntimeContext().getMetricGroup().addGroup("reason", reason.label()).counter("deadLettered"));
    }
  }

  @Override
  public void processElement(RawClick raw, Context ctx, Collector<Click> out) {
    Decoded decoded = ClickEventCodec.decode(raw.value(), ctx.timerService().currentProcessingTime());
    if (decoded instanceof Decoded.Valid valid) {
      ClickEvent e = valid.event();
      parsed.inc();
      out.collect(new Click(e.clickId().toString(), e.code(), e.ts(), e.bot()));
    } else if (decoded instanceof Decoded.Malformed bad) {
      deadLettered.get(bad.reason()).inc();
      ctx.output(
          DEAD_LETTERS,
          new DeadLetter(bad.reason().label(), bad.detail(), raw.topic(), raw.partition(), raw.offset(), raw.value()));
    }
  }
}
