package io.tally.counting.functions;

import java.time.Duration;
import org.apache.flink.api.common.state.StateTtlConfig;

/**
 * How the job's remembered sets expire: an entry lives {@code ttl} after it was last written, is
 * never read once expired, and is removed by RocksDB's compaction filter rather than on access,
 * which would copy whole maps of busy links.
 */
public final class ExpiringState {

  private ExpiringState() {}

  public static StateTtlConfig afterWrite(Duration ttl) {
    return StateTtlConfig.newBuilder(ttl)
        .setUpdateType(StateTtlConfig.UpdateType.OnCreateAndWrite)
        .setStateVisibility(StateTtlConfig.StateVisibility.NeverReturnExpired)
        .cleanupInRocksdbCompactFilter(1000)
        .build();
  }
}
