package io.tally.counting;

import static io.tally.counting.Clicks.MINUTE;
import static io.tally.counting.Clicks.asBot;
import static io.tally.counting.Clicks.at;
import static io.tally.counting.Clicks.botClick;
import static io.tally.counting.Clicks.idAt;
import static io.tally.counting.Clicks.visit;
import static io.tally.counting.Clicks.withId;
import static org.assertj.core.api.Assertions.assertThat;

import io.tally.counting.functions.MarkNewVisitors;
import io.tally.counting.records.Click;
import io.tally.counting.serde.ClickSerializer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.UUID;
import java.util.stream.Collectors;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link UniqueClicks} as the live job runs it, on a MiniCluster at parallelism 2, against an
 * oracle.
 */
class UniqueClicksITCase {

  private static final long HOUR = 60 * MINUTE;

  @RegisterExtension
  static final MiniClusterExtension FLINK =
      new MiniClusterExtension(
          new MiniClusterResourceConfiguration.Builder()
              .setNumberTaskManagers(1)
              .setNumberSlotsPerTaskManager(2)
              .build());

  @Test
  void aReplayedCopyThatAnUpgradedClassifierJudgesOtherwiseIsCountedOnce() throws Exception {
    // The originals were a person's and a bot's; the classifier changed, then the log was replayed:
    // the same events, with and without a visitor hash, with ids of both kinds.
    List<Click> originals =
        List.of(
            visit7("a", at(0), "visitor-1"),
            asBot(visit7("b", at(1), "visitor-2"), "crawler"),
            visit7("c", at(2), ""),
            asBot(visit7("d", at(3), ""), "crawler"),
            visit("e", "abc", at(4), "visitor-1"),
            asBot(visit("f", "abc", at(5), "visitor-2"), "crawler"));
    List<Click> log = new ArrayList<>(originals);
    for (Click original : originals) {
      log.add(asBot(original, original.bot() ? "" : "crawler"));
    }

    List<Click> out = run(log);

    assertThat(out)
        .extracting(Click::clickId)
        .containsExactlyInAnyOrderElementsOf(originals.stream().map(Click::clickId).toList());
  }

  @Test
  void marksTheVisitorsAndLetsTheClicksThroughThatTheOracleDoes() throws Exception {
    List<Click> log = generated(20_000, new Random(7));

    assertThat(perLinkAndHour(run(log))).isEqualTo(perLinkAndHour(oracle(log)));
  }

  private static List<Click> run(List<Click> log) throws Exception {
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    env.setParallelism(2);
    DataStream<Click> clicks =
        env.fromData(ClickSerializer.TYPE, log.toArray(Click[]::new))
            .assignTimestampsAndWatermarks(
                WatermarkStrategy.<Click>forBoundedOutOfOrderness(Duration.ofDays(2))
                    .withTimestampAssigner((click, previous) -> click.ts()));
    UniqueClicks.Memory memory =
        new UniqueClicks.Memory(Duration.ofHours(24), MarkNewVisitors.LIVE_TTL);
    List<Click> out = new ArrayList<>();
    UniqueClicks.of(clicks, memory, Duration.ZERO)
        .clicks()
        .executeAndCollect()
        .forEachRemaining(out::add);
    return out;
  }

  /** A person's click on link {@code abc} with a version-7 id made at {@code ts}. */
  private static Click visit7(String label, long ts, String visitor) {
    return withId(visit(label, "abc", ts, visitor), idAt(label, ts));
  }

  /**
   * Over two days: 300 links, visitors who come back within and across hours and days, bots with
   * and without a visitor hash, bursts, clicks without a visitor hash, ids of version 7 and (one in
   * ten) not, and one in ten clicks delivered again later, at times out of order.
   */
  private static List<Click> generated(int clicks, Random random) {
    List<Click> log = new ArrayList<>();
    for (int i = 0; i < clicks; i++) {
      String code = "link" + random.nextInt(300);
      long ts = at(random.nextLong(48 * HOUR));
      int kind = random.nextInt(20);
      String visitor = "visitor-" + random.nextInt(2_000);
      Click click =
          kind == 0
              ? botClick("c" + i, code, ts)
              : kind == 1
                  ? visit("c" + i, code, ts, "")
                  : kind == 2
                      ? asBot(visit("c" + i, code, ts, visitor), "crawler")
                      : kind == 3
                          ? asBot(visit("c" + i, code, ts, visitor), "burst")
                          : visit("c" + i, code, ts, visitor);
      if (random.nextInt(10) != 0) {
        click = withId(click, idAt("c" + i, ts));
      }
      log.add(click);
      if (random.nextInt(10) == 0) {
        log.add(random.nextInt(log.size()), click);
      }
    }
    return log;
  }

  /**
   * The marks as a plain reading of the rules gives them: each id once, a visitor's first click per
   * hour and day.
   */
  private static List<Click> oracle(List<Click> log) {
    Map<UUID, Click> unique = new java.util.LinkedHashMap<>();
    log.forEach(click -> unique.putIfAbsent(click.clickId(), click));
    Map<String, Long> firstInHour = new java.util.HashMap<>();
    Map<String, Long> firstInDay = new java.util.HashMap<>();
    for (Click click : unique.values()) {
      if (!click.bot() && !click.visitor().isEmpty()) {
        String visitor = click.code() + "/" + click.visitor();
        firstInHour.merge(visitor + "/" + click.ts() / HOUR, click.ts(), Math::min);
        firstInDay.merge(visitor + "/" + click.ts() / (24 * HOUR), click.ts(), Math::min);
      }
    }
    List<Click> marked = new ArrayList<>();
    for (Click click : unique.values()) {
      String visitor = click.code() + "/" + click.visitor();
      boolean counts = !click.bot() && !click.visitor().isEmpty();
      marked.add(
          click.withNewVisitor(
              counts && firstInHour.get(visitor + "/" + click.ts() / HOUR) == click.ts(),
              counts && firstInDay.get(visitor + "/" + click.ts() / (24 * HOUR)) == click.ts()));
    }
    return marked;
  }

  /**
   * Per (link, hour): clicks, bot clicks, clicks new in their hour; per (link, day): clicks new in
   * their day. What the hour and day rows hold; which of a visitor's clicks carries a mark depends
   * on arrival order.
   */
  private static Map<String, List<Long>> perLinkAndHour(List<Click> clicks) {
    Map<String, List<Long>> rows =
        new TreeMap<>(
            clicks.stream()
                .collect(
                    Collectors.groupingBy(
                        c -> c.code() + "@hour" + c.ts() / HOUR,
                        Collectors.collectingAndThen(
                            Collectors.toList(),
                            in ->
                                List.of(
                                    (long) in.size(),
                                    in.stream().filter(Click::bot).count(),
                                    in.stream().filter(Click::newVisitorInHour).count())))));
    rows.putAll(
        clicks.stream()
            .collect(
                Collectors.groupingBy(
                    c -> c.code() + "@day" + c.ts() / (24 * HOUR),
                    Collectors.collectingAndThen(
                        Collectors.filtering(Click::newVisitorInDay, Collectors.counting()),
                        List::of))));
    return rows;
  }
}
