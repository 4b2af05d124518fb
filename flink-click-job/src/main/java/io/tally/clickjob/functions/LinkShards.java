package io.tally.clickjob.functions;

import io.tally.clickjob.records.Click;
import io.tally.clickjob.records.LinkShard;
import org.apache.flink.api.java.functions.KeySelector;

/**
 * Spreads each link's clicks over {@value LinkShard#SHARDS} keys, so that a viral link is not one subtask's
 * work (ADR-005). The shard is chosen by the visitor hash, or by the click id for a bot or a click without
 * a visitor: a visitor's clicks on a link always meet under one key, where {@link MarkNewVisitors}
 * remembers them, and a click and its copies always meet where {@link DropDuplicateClicks} remembers its
 * id. Where the keys land: {@link LinkShard}.
 */
public final class LinkShards implements KeySelector<Click, LinkShard> {

  @Override
  public LinkShard getKey(Click click) {
    return new LinkShard(click.code(), shardOf(click));
  }

  /** The shard of a click: its visitor's for a person with a visitor hash, its own id's otherwise. */
  public static int shardOf(Click click) {
    String spreadBy = VisitorHours.counts(click) ? click.visitor() : click.clickId();
    return Math.floorMod(mix(spreadBy.hashCode()), LinkShard.SHARDS);
  }

  /** Spreads similar hashes (visitor hashes share their alphabet) before taking them modulo the shards. */
  private static int mix(int h) {
    h ^= h >>> 16;
    h *= 0x85ebca6b;
    h ^= h >>> 13;
    return h;
  }
}
