package io.tally.clickjob.functions;

import static io.tally.clickjob.Clicks.at;
import static io.tally.clickjob.Clicks.botClick;
import static io.tally.clickjob.Clicks.visit;
import static org.assertj.core.api.Assertions.assertThat;

import io.tally.clickjob.records.Click;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.junit.jupiter.api.Test;

/** Tests for {@link LinkShards}: where a link's clicks are keyed, and how evenly that spreads them. */
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
    assertThat(LinkShards.codeOf(shards.getKey(first))).isEqualTo("abc");
  }

  @Test
  void aLinksClicksSpreadOverEveryShard() throws Exception {
    Set<String> keys = new HashSet<>();
    for (int i = 0; i < 2_000; i++) {
      keys.add(shards.getKey(visit("id-" + i, "viral", at(i), "visitor-" + i)));
    }

    assertThat(keys).hasSize(LinkShards.SHARDS);
  }

  @Test
  void everyParallelismThatDividesTheShardsGetsTheSameShareOfEveryLink() throws Exception {
    for (String code : new String[] {"viral", "abc", "x", "Zz9-_"}) {
      for (int parallelism : new int[] {1, 2, 4, 8, 16, 32}) {
        Map<Integer, Integer> perSubtask = new HashMap<>();
        for (int shard = 0; shard < LinkShards.SHARDS; shard++) {
          int subtask = KeyGroupRangeAssignment.assignKeyToParallelOperator(
              shards.key(code, shard), LinkShards.MAX_PARALLELISM, parallelism);
          perSubtask.merge(subtask, 1, Integer::sum);
        }
        assertThat(perSubtask).as("%s at parallelism %d", code, parallelism).hasSize(parallelism);
        assertThat(Set.copyOf(perSubtask.values())).as("%s at parallelism %d", code, parallelism)
            .containsExactly(LinkShards.SHARDS / parallelism);
      }
    }
  }

  @Test
  void theKeyOfAShardDoesNotDependOnWhatWasAskedBefore() throws Exception {
    LinkShards fresh = new LinkShards();
    for (int shard = LinkShards.SHARDS - 1; shard >= 0; shard--) {
      fresh.key("other", shard);
    }

    for (int shard = 0; shard < LinkShards.SHARDS; shard++) {
      assertThat(fresh.key("abc", shard)).isEqualTo(shards.key("abc", shard));
    }
  }
}
