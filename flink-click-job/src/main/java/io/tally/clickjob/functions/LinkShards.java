package io.tally.clickjob.functions;

import io.tally.clickjob.records.Click;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;

/**
 * Spreads each link's clicks over {@link #SHARDS} keys, so that a viral link is not one subtask's work
 * (ADR-005). The key is the link code plus a shard chosen by the visitor hash, or by the click id for a bot
 * or a click without a visitor: a visitor's clicks on a link always meet under one key, where
 * {@link MarkNewVisitors} remembers them, and a click and its copies always meet where
 * {@link DropDuplicateClicks} remembers its id.
 *
 * <p>Hashed keys would land on subtasks by chance: 32 random keys over 2 subtasks leave one with 20 of them
 * about one time in five. Instead the shard suffix of each key is picked so that a link's keys fall on
 * evenly spaced key groups ({@link #MAX_PARALLELISM} apart divided by {@link #SHARDS}); since Flink gives
 * each subtask a contiguous range of key groups, every parallelism that divides {@value #SHARDS} gets the
 * same number of a link's shards on every subtask. The job fixes its maximum parallelism to
 * {@value #MAX_PARALLELISM} for this, as savepoints need anyway.
 *
 * <p>Changing {@link #SHARDS} or the key format moves keys between key groups: the keyed state would no
 * longer be found. It is part of the state layout, like the operators' uids.
 */
public final class LinkShards implements KeySelector<Click, String> {

  /** Keys per link: spreads a link evenly over any parallelism that divides it, up to itself. */
  public static final int SHARDS = 32;
  /** The job's maximum parallelism, the number of key groups. */
  public static final int MAX_PARALLELISM = 128;
  /** Separates the code from the shard suffix; no code contains it. */
  static final char SEPARATOR = '\u001f';

  private static final int SPACING = MAX_PARALLELISM / SHARDS;
  private static final int CACHED_LINKS = 4_096;

  /** Each recent link's shard keys, made on first use: finding a suffix takes a few hundred hash tries. */
  private transient Map<String, String[]> recent;

  @Override
  public String getKey(Click click) {
    return key(click.code(), shardOf(click));
  }

  /** The shard of a click: its visitor's for a person with a visitor hash, its own id's otherwise. */
  public static int shardOf(Click click) {
    String spreadBy = VisitorHours.counts(click) ? click.visitor() : click.clickId();
    return Math.floorMod(mix(spreadBy.hashCode()), SHARDS);
  }

  /** The key of {@code code}'s shard {@code shard}. */
  public String key(String code, int shard) {
    if (recent == null) {
      recent = new LinkedHashMap<>(256, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, String[]> eldest) {
          return size() > CACHED_LINKS;
        }
      };
    }
    String[] keys = recent.computeIfAbsent(code, c -> new String[SHARDS]);
    String key = keys[shard];
    if (key == null) {
      key = keyOnGroup(code, targetGroup(code, shard));
      keys[shard] = key;
    }
    return key;
  }

  /** The link code a shard key belongs to. */
  public static String codeOf(String key) {
    return key.substring(0, key.lastIndexOf(SEPARATOR));
  }

  /** The key group shard {@code shard} of {@code code} is placed on. */
  static int targetGroup(String code, int shard) {
    int base = KeyGroupRangeAssignment.assignToKeyGroup(code, MAX_PARALLELISM);
    return (base + shard * SPACING) % MAX_PARALLELISM;
  }

  /**
   * {@code code}, the separator and one suffix character chosen so that Flink assigns the key to
   * {@code group}. The String hash of the key is computed from the code's as each candidate is tried.
   */
  static String keyOnGroup(String code, int group) {
    int prefixHash = 31 * code.hashCode() + SEPARATOR;
    for (char suffix = 'A'; suffix < Character.MIN_SURROGATE; suffix++) {
      if (KeyGroupRangeAssignment.computeKeyGroupForKeyHash(31 * prefixHash + suffix, MAX_PARALLELISM) == group) {
        return code + SEPARATOR + suffix;
      }
    }
    throw new IllegalStateException("no shard suffix places '" + code + "' on key group " + group);
  }

  /** Spreads similar hashes (visitor hashes share their alphabet) before taking them modulo the shards. */
  private static int mix(int h) {
    h ^= h >>> 16;
    h *= 0x85ebca6b;
    h ^= h >>> 13;
    return h;
  }
}
