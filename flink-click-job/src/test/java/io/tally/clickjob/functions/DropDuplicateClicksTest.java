package io.tally.clickjob.functions;

import static io.tally.clickjob.Clicks.at;
import static io.tally.clickjob.Clicks.click;
import static org.assertj.core.api.Assertions.assertThat;

import io.tally.clickjob.records.Click;
import io.tally.clickjob.records.LinkShard;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import java.time.Duration;
import org.apache.flink.state.rocksdb.EmbeddedRocksDBStateBackend;
import org.apache.flink.streaming.api.operators.KeyedProcessOperator;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Tests for {@link DropDuplicateClicks}, on RocksDB as in production. */
class DropDuplicateClicksTest {

  private static final Duration TTL = Duration.ofHours(24);

  private KeyedOneInputStreamOperatorTestHarness<LinkShard, Click, Click> harness;

  @BeforeEach
  void setUp() throws Exception {
    harness =
        new KeyedOneInputStreamOperatorTestHarness<>(
            new KeyedProcessOperator<>(new DropDuplicateClicks(TTL)),
            new LinkShards(),
            TypeInformation.of(LinkShard.class));
    harness.setStateBackend(new EmbeddedRocksDBStateBackend());
    harness.setStateTtlProcessingTime(0);
    harness.open();
  }

  @AfterEach
  void tearDown() throws Exception {
    harness.close();
  }

  @Test
  void letsEachClickIdThroughOnce() throws Exception {
    harness.processElement(click("a", "abc", at(0)), at(0));
    harness.processElement(click("b", "abc", at(1)), at(1));
    harness.processElement(click("a", "abc", at(2)), at(2));
    harness.processElement(click("a", "abc", at(3)), at(3));

    assertThat(harness.extractOutputValues()).extracting(Click::clickId).containsExactly("a", "b");
  }

  @Test
  void sameClickIdUnderAnotherCodeIsNotADuplicate() throws Exception {
    // Ids are unique per click, so this never happens for real; the set is per code by design.
    harness.processElement(click("a", "abc", at(0)), at(0));
    harness.processElement(click("a", "xyz", at(0)), at(0));

    assertThat(harness.extractOutputValues()).hasSize(2);
  }

  @Test
  void remembersAClickIdForTheTtlAndForgetsItAfter() throws Exception {
    harness.processElement(click("a", "abc", at(0)), at(0));

    harness.setStateTtlProcessingTime(TTL.toMillis() - 1);
    harness.processElement(click("a", "abc", at(1)), at(1));
    assertThat(harness.extractOutputValues()).hasSize(1);

    harness.setStateTtlProcessingTime(TTL.toMillis() + 1);
    harness.processElement(click("a", "abc", at(2)), at(2));
    assertThat(harness.extractOutputValues())
        .as("a copy redelivered after the TTL is no longer recognised: the TTL bounds the promise")
        .hasSize(2);
  }
}
