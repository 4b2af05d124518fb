package io.tally.clickjob.functions;

import static io.tally.clickjob.Clicks.at;
import static io.tally.clickjob.Clicks.botClick;
import static io.tally.clickjob.Clicks.visit;
import static org.assertj.core.api.Assertions.assertThat;

import io.tally.clickjob.records.Click;
import io.tally.clickjob.records.LinkShard;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.apache.flink.api.common.serialization.SerializerConfigImpl;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.java.typeutils.PojoTypeInfo;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.junit.jupiter.api.Test;

/** Tests for {@link LinkShards} and {@link LinkShard}: where a link's clicks are keyed, and how evenly. */
class LinkShardsTest {

  private final LinkShards shards = new LinkShards();

  @Test
  void aVisitorsClicksOnALinkShareOneKeyAndACopyOfAClickSharesItsKey() throws Exception {
    Click first = visit("id-1", "abc", at(0), "visitor-7");
    Click later = visit("id-2", "abc", at(5_000), "visitor-7");
    Click bot = botClick("id-3", "abc", at(0));
    Click botCopy = botClick("id-3", "abc", at(0));

    assertThat(shards.getKey(later)).isEqualTo(shards.getKey(first));
    assertThat(shards.getKey(botCopy)).isEqualTo(shards.getKey(bot));
    assertThat(shards.getKey(first).code).isEqualTo("abc");
  }

  @Test
  void aLinksClicksSpreadOverEveryShard() throws Exception {
    Set<LinkShard> keys = new HashSet<>();
    for (int i = 0; i < 2_000; i++) {
      keys.add(shards.getKey(visit("id-" + i, "viral", at(i), "visitor-" + i)));
    }

    assertThat(keys).hasSize(LinkShard.SHARDS);
  }

  @Test
  void everyParallelismThatDividesTheShardsGetsTheSameShareOfEveryLink() {
    for (String code : new String[] {"viral", "abc", "x", "Zz9-_", "L000000"}) {
      for (int parallelism : new int[] {1, 2, 4, 8, 16, 32}) {
        Map<Integer, Integer> perSubtask = new HashMap<>();
        for (int shard = 0; shard < LinkShard.SHARDS; shard++) {
          int subtask = KeyGroupRangeAssignment.assignKeyToParallelOperator(
              new LinkShard(code, shard), LinkShard.MAX_PARALLELISM, parallelism);
          perSubtask.merge(subtask, 1, Integer::sum);
        }
        assertThat(perSubtask).as("%s at parallelism %d", code, parallelism).hasSize(parallelism);
        assertThat(Set.copyOf(perSubtask.values())).as("%s at parallelism %d", code, parallelism)
            .containsExactly(LinkShard.SHARDS / parallelism);
      }
    }
  }

  @Test
  void keysOfManyLinksHaveDiverseHashCodesSoHashMapsOfThemStayFast() {
    Set<Integer> hashes = new HashSet<>();
    int keys = 0;
    for (int link = 0; link < 1_000; link++) {
      for (int shard = 0; shard < LinkShard.SHARDS; shard++) {
        hashes.add(new LinkShard("L" + link, shard).hashCode());
        keys++;
      }
    }

    assertThat(hashes.size()).as("distinct hash codes of %d keys", keys).isGreaterThan(keys * 3 / 4);
  }

  @Test
  void aKeyReadBackByFlinksSerializerLandsOnTheSameKeyGroup() throws Exception {
    TypeInformation<LinkShard> type = TypeInformation.of(LinkShard.class);
    assertThat(type).isInstanceOf(PojoTypeInfo.class);
    TypeSerializer<LinkShard> serializer = type.createSerializer(new SerializerConfigImpl());
    LinkShard key = new LinkShard("viral", 17);
    DataOutputSerializer out = new DataOutputSerializer(64);
    serializer.serialize(key, out);

    LinkShard read = serializer.deserialize(new DataInputDeserializer(out.getCopyOfBuffer()));

    assertThat(read).isEqualTo(key);
    assertThat(KeyGroupRangeAssignment.assignToKeyGroup(read, LinkShard.MAX_PARALLELISM))
        .isEqualTo(KeyGroupRangeAssignment.assignToKeyGroup(key, LinkShard.MAX_PARALLELISM))
        .isEqualTo(key.keyGroup());
  }
}
