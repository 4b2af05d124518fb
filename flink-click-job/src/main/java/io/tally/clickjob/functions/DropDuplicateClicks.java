package io.tally.clickjob.functions;

import io.tally.clickjob.records.Click;
import io.tally.clickjob.records.LinkShard;
import java.time.Duration;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

/**
 * Lets each click id through once per link. Keyed by link shard ({@link LinkShards}), which every copy of a
 * click shares; the click ids seen are a {@code MapState} whose entries expire {@code ttl} after they were
 * written, cleaned by RocksDB's compaction filter.
 *
 * <p>The TTL bounds the promise: a copy of a click redelivered later than the TTL after the original is
 * counted again. Producer retries and job restarts redeliver within minutes, far inside the 24 h default.
 */
public class DropDuplicateClicks extends KeyedProcessFunction<LinkShard, Click, Click> {

  private final Duration ttl;
  private transient MapState<String, Boolean> seen;
  private transient Counter duplicates;

  public DropDuplicateClicks(Duration ttl) {
    this.ttl = ttl;
  }

  @Override
  public void open(OpenContext openContext) {
    MapStateDescriptor<String, Boolean> descriptor =
        new MapStateDescriptor<>("seen-click-ids", Types.STRING, Types.BOOLEAN);
    descriptor.enableTimeToLive(ExpiringState.afterWrite(ttl));
    seen = getRuntimeContext().getMapState(descriptor);
    duplicates = getRuntimeContext().getMetricGroup().counter("duplicatesDropped");
  }

  @Override
  public void processElement(Click click, Context ctx, Collector<Click> out) throws Exception {
    if (seen.contains(click.clickId())) {
      duplicates.inc();
      return;
    }
    seen.put(click.clickId(), Boolean.TRUE);
    out.collect(click);
  }
}
