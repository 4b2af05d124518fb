package io.tally.counting.functions;

import io.tally.counting.records.Click;
import io.tally.counting.serde.ClickSerializer;
import java.io.Serializable;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.metrics.Counter;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.runtime.state.StateInitializationContext;
import org.apache.flink.runtime.state.StateSnapshotContext;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.util.OutputTag;

/**
 * The live job's dedup: each click id once, a click's first copy judged late or on time once
 * ({@link Lateness}), copies to {@link #DUPLICATES}, late clicks to {@link #LATE}, without a state
 * read or write per click. Keyed by click id ({@link #byClickId}), so a copy meets its original
 * whatever any classifier, visitor hash or link says about either, or by a key that holds the click
 * id and places it by something else ({@link DropDuplicateVisitorClicks}).
 *
 * <p>This is where a click's first copy is judged too late to count, the one judgement every later
 * step abides by: a later step's watermark, the least of its inputs', is never ahead of the one
 * here when the click passed, so a click on time here is on time there. A late click goes to {@link
 * #LATE} and is remembered, so a late copy of a counted click is only a duplicate. The watermark is
 * kept in operator state ({@link JudgedWatermark}) and the ids' memory counts only the time the job
 * ran ({@link Downtime}), so both judgements outlive a restart.
 *
 * <p>A click id is a UUIDv7 made at the click, so it says which minute it belongs to. The ids a
 * subtask has seen are kept per (minute of the id, key group of its key) in a {@link
 * ClickIdBucket}: on the heap while the minute is recent, and in keyed list state, where the ids a
 * bucket gained since the last checkpoint are appended as one chunk before the next (a RocksDB
 * merge: nothing is read). A bucket's state lives under a key of its key group chosen once ({@link
 * #representatives}) and the minute as namespace, so it moves with its key group on a rescale, and
 * each chunk leaves state {@code forgetAfter} of the job's running time after it was written
 * ({@link Downtime}), through RocksDB's compaction filter.
 *
 * <p>A bucket comes to the heap with the first id of its minute and key group that the subtask
 * meets, reading what state holds of it once (nothing, for a new minute; what was stored before a
 * restore or rescale). It leaves at a checkpoint once its minute is more than {@value
 * #MINUTES_BEHIND} minutes behind the watermark's or more than {@value #MINUTES_AHEAD} ahead of it,
 * its new ids stored first, so that the copy of an older click, a late click or an id made by a
 * clock far off costs one read of its bucket per checkpoint interval. Past {@value
 * #MAX_IDS_ON_HEAP} ids on the heap (a watermark held back by a stalled partition), the buckets
 * farthest from the watermark's minute leave too.
 *
 * <p>An id that is not version 7, and one made before this dedup first ran on the job's state
 * (which an earlier dedup may have remembered one by one: ids made before that state's checkpoint,
 * with a margin for clocks), takes the earlier dedup's path: one flag per id in keyed state ({@code
 * seen}), remembered {@code forgetAfter} of the job's running time.
 */
public class DropDuplicatesByMinute<K> extends AbstractStreamOperator<Click>
    implements OneInputStreamOperator<Click, Click> {

  /** The dedup's key where clicks are deduped by id alone: the click id. */
  public static final KeySelector<Click, UUID> BY_CLICK_ID = Click::clickId;

  /** First copies too late to count. */
  public static final OutputTag<Click> LATE = new OutputTag<>("late-clicks", ClickSerializer.TYPE);

  /**
   * Copies dropped, for the ledger that counts them per link; a step that ignores it pays nothing.
   */
  public static final OutputTag<Click> DUPLICATES =
      new OutputTag<>("duplicate-clicks", ClickSerializer.TYPE);

  /**
   * Makes the {@code number}th key of the operator's key type: the keys a bucket's state is stored
   * under are the first of these in each key group ({@link #representatives}).
   *
   * @param <K> the key type
   */
  @FunctionalInterface
  public interface NumberedKeys<K> extends Serializable {
    /** A key, the same for the same number on every JVM; keys of different numbers differ. */
    K key(long number);
  }

  /** How far ahead of the watermark an id's minute may be and still be kept on the heap. */
  static final long MINUTES_AHEAD = 60;

  /**
   * Minutes kept on the heap behind the watermark's. Older ones still take on-time clicks within
   * the allowed lateness, late clicks and copies replayed from long ago, all rare: such a minute's
   * bucket is read back and kept until the next checkpoint.
   */
  static final long MINUTES_BEHIND = 2;

  /** Ids kept on the heap per subtask at most, about 36 bytes each, checked at each checkpoint. */
  static final long MAX_IDS_ON_HEAP = 4_000_000;

  /**
   * Version-7 ids made this long after an earlier dedup last ran on the state may still be in its
   * flags: a margin for clocks that disagree.
   */
  static final long CLOCK_MARGIN_MILLIS = 5 * 60_000L;

  private static final String BUCKETS = "click-ids-by-minute";

  /** An odd constant (2^64 over the golden ratio) and its inverse modulo 2^64. */
  private static final long SPREAD = 0x9E3779B97F4A7C15L;

  private static final long UNSPREAD = 0xF1DE83E19937733DL;

  private final Duration forgetAfter;
  private final Lateness lateness;
  private final NumberedKeys<K> numberedKeys;
  private final boolean mayFollowFlags;

  private transient JudgedWatermark watermark;
  private transient Downtime downtime;

  /**
   * Version-7 ids made from this instant on go to buckets; older ones may be in {@link #seen}, kept
   * there by an earlier dedup of the same state.
   */
  private transient long bucketsSince;

  private transient ValueState<Boolean> seen;
  private transient ListStateDescriptor<byte[]> bucketsDescriptor;
  private transient Map<Long, ClickIdBucket> buckets;
  private transient int maxParallelism;
  private transient KeyGroupRange keyGroups;

  /** A key of each of this subtask's key groups, by key group less the first. */
  private transient Object[] representatives;

  private transient long idsOnHeap;
  private transient Counter duplicates;
  private transient Counter stateLookups;

  /**
   * @param forgetAfter how long of the job's running time an id is remembered
   * @param allowedLateness how long after its minute's end a click still counts
   * @param numberedKeys keys of the key type, to store buckets under
   * @param mayFollowFlags whether state restored without this operator's own may be an earlier
   *     dedup's flags per id (under the same uid)
   */
  protected DropDuplicatesByMinute(
      Duration forgetAfter,
      Duration allowedLateness,
      NumberedKeys<K> numberedKeys,
      boolean mayFollowFlags) {
    this.forgetAfter = forgetAfter;
    this.lateness = new Lateness(allowedLateness.toMillis());
    this.numberedKeys = numberedKeys;
    this.mayFollowFlags = mayFollowFlags;
  }

  /**
   * The dedup keyed by click id ({@link #BY_CLICK_ID}), which follows the state of the earlier
   * dedup's flags per id.
   *
   * @param forgetAfter how long of the job's running time an id is remembered
   * @param allowedLateness how long after its minute's end a click still counts
   */
  public static DropDuplicatesByMinute<UUID> byClickId(
      Duration forgetAfter, Duration allowedLateness) {
    return new DropDuplicatesByMinute<>(
        forgetAfter, allowedLateness, number -> new UUID(0, number), true);
  }

  @Override
  public void initializeState(StateInitializationContext context) throws Exception {
    super.initializeState(context);
    long now = getProcessingTimeService().getCurrentProcessingTime();
    downtime =
        Downtime.restore(
            context.getOperatorStateStore(), "seen", context.isRestored(), now, forgetAfter);
    watermark = JudgedWatermark.restore(context.getOperatorStateStore());
    // A first start has nothing remembered; an earlier dedup's state has the ids it saw before its
    // snapshot, whose time every subtask reads alike.
    long snapshotAt = downtime.restoredSnapshotAt();
    bucketsSince =
        InstantChosenOnce.restore(
            context.getOperatorStateStore(),
            "buckets-since",
            () ->
                !context.isRestored() || !mayFollowFlags
                    ? 0
                    : (snapshotAt == Long.MAX_VALUE ? now : snapshotAt) + CLOCK_MARGIN_MILLIS);
  }

  @Override
  public void open() throws Exception {
    super.open();
    ValueStateDescriptor<Boolean> seenDescriptor =
        new ValueStateDescriptor<>("seen", Types.BOOLEAN);
    seenDescriptor.enableTimeToLive(downtime.expiringAfterWrite(forgetAfter));
    seen = getRuntimeContext().getState(seenDescriptor);
    bucketsDescriptor =
        new ListStateDescriptor<>(BUCKETS, PrimitiveArrayTypeInfo.BYTE_PRIMITIVE_ARRAY_TYPE_INFO);
    bucketsDescriptor.enableTimeToLive(downtime.expiringAfterWrite(forgetAfter));
    buckets = new HashMap<>();
    var task = getRuntimeContext().getTaskInfo();
    maxParallelism = task.getMaxNumberOfParallelSubtasks();
    keyGroups =
        KeyGroupRangeAssignment.computeKeyGroupRangeForOperatorIndex(
            maxParallelism, task.getNumberOfParallelSubtasks(), task.getIndexOfThisSubtask());
    representatives = representatives(keyGroups, maxParallelism, numberedKeys);
    duplicates = getMetricGroup().counter("duplicatesDropped");
    stateLookups = getMetricGroup().counter("clickIdStateLookups");
    getMetricGroup().gauge("clickIdsOnHeap", () -> idsOnHeap);
  }

  /**
   * For each key group of {@code range}, the first of the keys numbered 0, 1, ... that falls in it:
   * the key its buckets are stored under, the same on every subtask that ever holds the key group.
   * A click's key may be one of these (by click id they are the ids {@code (0, n)}, of version 0,
   * which no click id has), but buckets are a state of their own.
   */
  static Object[] representatives(
      KeyGroupRange range, int maxParallelism, NumberedKeys<?> numberedKeys) {
    Object[] keys = new Object[range.getNumberOfKeyGroups()];
    int found = 0;
    for (long i = 0; found < keys.length; i++) {
      Object candidate = numberedKeys.key(i);
      int group = KeyGroupRangeAssignment.assignToKeyGroup(candidate, maxParallelism);
      if (range.contains(group) && keys[group - range.getStartKeyGroup()] == null) {
        keys[group - range.getStartKeyGroup()] = candidate;
        found++;
      }
    }
    return keys;
  }

  @Override
  public void processElement(StreamRecord<Click> element) throws Exception {
    Click click = element.getValue();
    UUID id = click.clickId();
    boolean isNew = ClickIdBucket.fitsMadeFrom(id, bucketsSince) ? addToBucket(id) : addToSeen();
    if (!isNew) {
      duplicates.inc();
      output.collect(DUPLICATES, element);
      return;
    }
    if (lateness.tooLate(click.ts(), watermark.get())) {
      output.collect(LATE, element);
      return;
    }
    output.collect(element);
  }

  @Override
  public void processWatermark(Watermark mark) throws Exception {
    watermark.advance(mark.getTimestamp());
    super.processWatermark(mark);
  }

  /** The state reads so far: one per bucket brought to the heap, one per id looked up alone. */
  long stateLookups() {
    return stateLookups.getCount();
  }

  /** The ids on the heap. */
  long idsOnHeap() {
    return idsOnHeap;
  }

  /** Adds the current key's id to {@link #seen}; returns whether it is new. */
  private boolean addToSeen() throws Exception {
    if (seen.value() != null) {
      return false;
    }
    seen.update(Boolean.TRUE);
    return true;
  }

  private boolean addToBucket(UUID id) throws Exception {
    long minute = ClickIdBucket.minuteOf(id);
    int keyGroup = KeyGroupRangeAssignment.assignToKeyGroup(getCurrentKey(), maxParallelism);
    int high = ClickIdBucket.high(id);
    long low = id.getLeastSignificantBits();
    long bucketKey = bucketKey(minute, keyGroup - keyGroups.getStartKeyGroup());
    ClickIdBucket bucket = buckets.get(bucketKey);
    if (bucket == null) {
      bucket = load(minute, keyGroup);
      buckets.put(bucketKey, bucket);
      idsOnHeap += bucket.size();
    }
    if (!bucket.add(high, low)) {
      return false;
    }
    idsOnHeap++;
    return true;
  }

  /** Whether a bucket of {@code minute} belongs on the heap at the current watermark. */
  private boolean onHeap(long minute) {
    long judged = watermark.get();
    if (judged == Long.MIN_VALUE) {
      return true;
    }
    long watermarkMinute = Math.floorDiv(judged, 60_000L);
    return minute >= oldestOnHeap(judged) && minute <= watermarkMinute + MINUTES_AHEAD;
  }

  /** The oldest minute whose bucket stays on the heap at {@code judged}. */
  private long oldestOnHeap(long judged) {
    if (judged == Long.MIN_VALUE) {
      return Long.MIN_VALUE;
    }
    return Math.floorDiv(judged, 60_000L) - MINUTES_BEHIND;
  }

  /** A bucket with what state holds of it. */
  private ClickIdBucket load(long minute, int keyGroup) throws Exception {
    ClickIdBucket bucket = new ClickIdBucket();
    Object key = getCurrentKey();
    Iterable<byte[]> chunks = stored(minute, keyGroup).get();
    if (chunks != null) {
      for (byte[] chunk : chunks) {
        bucket.addStored(chunk);
      }
    }
    stateLookups.inc();
    setCurrentKey(key);
    return bucket;
  }

  /** A bucket's state, the current key set to its key group's representative. */
  private ListState<byte[]> stored(long minute, int keyGroup) throws Exception {
    setCurrentKey(representatives[keyGroup - keyGroups.getStartKeyGroup()]);
    return getPartitionedState(minute, LongSerializer.INSTANCE, bucketsDescriptor);
  }

  /**
   * Appends every bucket's ids gained since the last checkpoint to its state, then lets the buckets
   * of minutes no longer near the watermark go, and the farthest from it while the heap holds too
   * many.
   */
  @Override
  public void prepareSnapshotPreBarrier(long checkpointId) throws Exception {
    for (Map.Entry<Long, ClickIdBucket> entry : buckets.entrySet()) {
      byte[] chunk = entry.getValue().takeUnstored();
      if (chunk != null) {
        stored(minuteOf(entry.getKey()), keyGroupOf(entry.getKey())).add(chunk);
      }
    }
    buckets.entrySet().removeIf(entry -> !onHeap(minuteOf(entry.getKey())) && evicted(entry));
    if (idsOnHeap > MAX_IDS_ON_HEAP) {
      long judged = watermark.get();
      long center = judged == Long.MIN_VALUE ? Long.MAX_VALUE : Math.floorDiv(judged, 60_000L);
      List<Map.Entry<Long, ClickIdBucket>> farthestFirst = new ArrayList<>(buckets.entrySet());
      farthestFirst.sort(
          Comparator.comparingLong(
                  (Map.Entry<Long, ClickIdBucket> entry) ->
                      Math.abs(minuteOf(entry.getKey()) - center))
              .reversed());
      for (Map.Entry<Long, ClickIdBucket> entry : farthestFirst) {
        if (idsOnHeap <= MAX_IDS_ON_HEAP) {
          break;
        }
        evicted(entry);
        buckets.remove(entry.getKey());
      }
    }
    super.prepareSnapshotPreBarrier(checkpointId);
  }

  /** Counts a bucket leaving the heap, all of its ids stored; returns true. */
  private boolean evicted(Map.Entry<Long, ClickIdBucket> entry) {
    idsOnHeap -= entry.getValue().size();
    return true;
  }

  /**
   * The key of a minute's bucket of a key group (numbered from the subtask's first) in {@link
   * #buckets}: the two packed into a long, multiplied by an odd constant. {@link Long#hashCode}
   * folds a long's halves with an XOR, which packed alone left the recent minutes of 64 key groups
   * on a few dozen hash slots; the product spreads them, and its inverse gives them back.
   */
  static long bucketKey(long minute, int keyGroupIndex) {
    return (minute << 16 | keyGroupIndex) * SPREAD;
  }

  static long minuteOf(long bucketKey) {
    return (bucketKey * UNSPREAD) >> 16;
  }

  private int keyGroupOf(long bucketKey) {
    return (int) (bucketKey * UNSPREAD & 0xFFFF) + keyGroups.getStartKeyGroup();
  }

  @Override
  public void snapshotState(StateSnapshotContext context) throws Exception {
    super.snapshotState(context);
    downtime.snapshot(getProcessingTimeService().getCurrentProcessingTime());
    watermark.snapshot();
  }
}
