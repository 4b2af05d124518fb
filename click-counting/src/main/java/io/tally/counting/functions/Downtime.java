package io.tally.counting.functions;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;
import org.apache.flink.api.common.functions.RuntimeContext;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.OperatorStateStore;
import org.apache.flink.api.common.state.StateTtlConfig;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.streaming.api.operators.StreamingRuntimeContext;

/**
 * The times an operator's job was stopped, kept in its operator state, so that what it remembers
 * lives by the time the job ran and not by the wall clock: Flink's state TTL counts wall-clock time
 * since a write, a job stopped with a savepoint on a Friday and resumed on a Monday would find
 * every remembered click id, visitor mark and open period gone, and the clicks of the stop's
 * backlog are the very ones those entries were kept for.
 *
 * <p>A stop is measured on restore as the wall time since the restored snapshot was taken (for a
 * failover, the time since the last checkpoint), from the earliest of the subtasks' snapshot times,
 * and kept by that instant, which every subtask reads alike, so that the stop counts once whatever
 * the parallelism. Every entry written before a stop is given that stop's length on top of its TTL
 * ({@link #allowance}); a stop is forgotten once the job has run a whole TTL since it, when no
 * entry from before it can be alive. Flink fixes a state's TTL when the state is opened, so entries
 * written after a restore get the allowance too: for the rest of that run the remembered sets hold
 * the length of the stops more than they need.
 */
public final class Downtime {

  /** Stops kept apart at most; older ones are merged, which only lengthens the allowance. */
  static final int MAX_STOPS = 64;

  private final ListState<Long> snapshotAtState;
  private final ListState<Tuple2<Long, Long>> stopsState;

  /** Length of each stop by the wall time it began: the restored snapshot's. */
  private final NavigableMap<Long, Long> stops;

  /** The earliest subtask's time of the restored snapshot; {@link Long#MAX_VALUE} for none. */
  private final long restoredSnapshotAt;

  private Downtime(
      ListState<Long> snapshotAtState,
      ListState<Tuple2<Long, Long>> stopsState,
      NavigableMap<Long, Long> stops,
      long restoredSnapshotAt) {
    this.snapshotAtState = snapshotAtState;
    this.stopsState = stopsState;
    this.stops = stops;
    this.restoredSnapshotAt = restoredSnapshotAt;
  }

  /**
   * Reads the stops from operator state; when {@code restored}, the time since the restored
   * snapshot is one more stop, ending {@code now}. Stops the job has run {@code ttl} since are
   * dropped.
   *
   * @param name distinguishes the state of two TTLs in one operator
   */
  public static Downtime restore(
      OperatorStateStore store, String name, boolean restored, long now, Duration ttl)
      throws Exception {
    // Union state: every subtask wrote the same stops, and each needs them after a rescale.
    ListState<Long> snapshotAtState =
        store.getUnionListState(new ListStateDescriptor<>(name + "-snapshot-at", Types.LONG));
    ListState<Tuple2<Long, Long>> stopsState =
        store.getUnionListState(
            new ListStateDescriptor<>(name + "-stops", Types.TUPLE(Types.LONG, Types.LONG)));
    NavigableMap<Long, Long> stops = new TreeMap<>();
    for (Tuple2<Long, Long> stop : stopsState.get()) {
      stops.merge(stop.f0, stop.f1, Math::max);
    }
    long snapshotAt = Long.MAX_VALUE;
    for (Long at : snapshotAtState.get()) {
      snapshotAt = Math.min(snapshotAt, at);
    }
    if (restored && snapshotAt != Long.MAX_VALUE && now > snapshotAt) {
      stops.merge(snapshotAt, now - snapshotAt, Math::max);
    }
    Downtime downtime =
        new Downtime(snapshotAtState, stopsState, stops, restored ? snapshotAt : Long.MAX_VALUE);
    downtime.forgetStopsNoEntryLivedThrough(now, ttl.toMillis());
    return downtime;
  }

  /**
   * The wall clock as an operator reads it (a test harness sets it): the one Flink's state TTL
   * reads in a running job.
   */
  public static long now(RuntimeContext context) {
    return ((StreamingRuntimeContext) context)
        .getProcessingTimeService()
        .getCurrentProcessingTime();
  }

  /**
   * When the restored snapshot was taken, by the earliest subtask's clock: the same on every
   * subtask. {@link Long#MAX_VALUE} for a first start, or a state without the time.
   */
  public long restoredSnapshotAt() {
    return restoredSnapshotAt;
  }

  /**
   * What every entry's TTL is lengthened by: the stops an entry alive now may have lived through.
   */
  public Duration allowance() {
    long total = 0;
    for (long length : stops.values()) {
      total += length;
    }
    return Duration.ofMillis(total);
  }

  /** State that expires {@code ttl} of running time after a write: the TTL plus the allowance. */
  public StateTtlConfig expiringAfterWrite(Duration ttl) {
    return ExpiringState.afterWrite(ttl.plus(allowance()));
  }

  /** Stores the stops, and {@code now} as the snapshot's time. */
  public void snapshot(long now) throws Exception {
    snapshotAtState.update(List.of(now));
    stopsState.update(
        stops.entrySet().stream().map(stop -> Tuple2.of(stop.getKey(), stop.getValue())).toList());
  }

  /**
   * Drops the stops the job has run {@code ttl} since: an entry written before one of them has
   * expired by the time the job ran. Then merges the oldest ones into their successors until at
   * most {@link #MAX_STOPS} are left, which only lengthens the allowance.
   */
  private void forgetStopsNoEntryLivedThrough(long now, long ttl) {
    long laterStops = 0;
    for (Map.Entry<Long, Long> stop : stops.descendingMap().entrySet()) {
      long ranSince = now - (stop.getKey() + stop.getValue()) - laterStops;
      laterStops += stop.getValue();
      if (ranSince >= ttl) {
        stops.headMap(stop.getKey(), true).clear();
        break;
      }
    }
    while (stops.size() > MAX_STOPS) {
      Map.Entry<Long, Long> oldest = stops.pollFirstEntry();
      stops.merge(stops.firstKey(), oldest.getValue(), Long::sum);
    }
  }
}
