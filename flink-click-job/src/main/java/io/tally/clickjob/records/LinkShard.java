package io.tally.clickjob.records;

import java.util.Objects;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;

/**
 * The key of the job's per-click state: a link and one of its {@link #SHARDS} shards. A Flink POJO whose
 * hash code places the link's shards on evenly spaced key groups ({@link #MAX_PARALLELISM} divided by
 * {@link #SHARDS} apart): Flink gives each subtask a contiguous range of key groups, so every parallelism
 * that divides {@value #SHARDS} gets the same number of a link's shards on every subtask, where hashed
 * keys would land by chance (32 random keys over 2 subtasks leave one with 20 of them about one time in
 * five). The hash code depends only on the code and the shard, so a key read back from a checkpoint lands
 * where it was written.
 *
 * <p>{@link #SHARDS}, {@link #MAX_PARALLELISM} and the placement are part of the state layout, like the
 * operators' uids: changing them moves keys between key groups.
 */
public final class LinkShard {

  /** Keys per link: spreads a link evenly over any parallelism that divides it, up to itself. */
  public static final int SHARDS = 32;
  /** The job's maximum parallelism, the number of key groups. */
  public static final int MAX_PARALLELISM = 128;

  private static final int SPACING = MAX_PARALLELISM / SHARDS;
  /**
   * Hash codes per key group: {@code HASHES_OF_GROUP[g]} are ints Flink assigns to key group {@code g}.
   * Many per group, because hash maps keyed by this key (the heap timer queues' among them) need diverse
   * hash codes: with one per group, every key of a group collided.
   */
  private static final int[][] HASHES_OF_GROUP = new int[MAX_PARALLELISM][2048];

  static {
    int[] found = new int[MAX_PARALLELISM];
    int complete = 0;
    for (int hash = 0; complete < MAX_PARALLELISM; hash++) {
      int group = KeyGroupRangeAssignment.computeKeyGroupForKeyHash(hash, MAX_PARALLELISM);
      int[] hashes = HASHES_OF_GROUP[group];
      if (found[group] < hashes.length) {
        hashes[found[group]++] = hash;
        if (found[group] == hashes.length) {
          complete++;
        }
      }
    }
  }

  /** The link code. */
  public String code;
  /** The shard, 0 to {@link #SHARDS} − 1. */
  public int shard;

  /** For Flink's POJO serializer. */
  public LinkShard() {}

  public LinkShard(String code, int shard) {
    this.code = code;
    this.shard = shard;
  }

  /** The key group this key is placed on. */
  public int keyGroup() {
    int base = KeyGroupRangeAssignment.computeKeyGroupForKeyHash(code.hashCode(), MAX_PARALLELISM);
    return (base + shard * SPACING) % MAX_PARALLELISM;
  }

  @Override
  public int hashCode() {
    int[] hashes = HASHES_OF_GROUP[keyGroup()];
    return hashes[Math.floorMod(code.hashCode() * 31 + shard, hashes.length)];
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof LinkShard other && other.shard == shard && Objects.equals(other.code, code);
  }

  @Override
  public String toString() {
    return code + "#" + shard;
  }
}
