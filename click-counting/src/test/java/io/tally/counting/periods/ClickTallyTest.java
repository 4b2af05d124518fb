package io.tally.counting.periods;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.counting.Clicks;
import io.tally.counting.records.Click;
import io.tally.counting.records.DimensionCount;
import io.tally.event.ClickEvent;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** Tests for {@link ClickTally}. */
class ClickTallyTest {

  // Look-alike values: same length, shared prefixes and suffixes, empty, and one that is another's
  // tail.
  private static final String[] COUNTRIES = {"US", "UA", "SU", "unknown"};
  private static final String[] REFERRERS = {"", "a.com", "b.com", "ba.com", "a.co", "news.a.com"};
  private static final String[] BROWSERS = {"Chrome", "Chromium", "Edge"};
  private static final String[] OSES = {"Mac", "Mac OS", "iOS"};
  private static final String[] DEVICES = {"desktop", "phone", "tablet"};
  private static final String[] BOT_KINDS = {"crawler", "preview", "monitor"};
  private static final String[] CAMPAIGN_TAGS = {"newsletter", "news", "x", "spring sale"};

  @Test
  void countsEachDimensionValueOfEveryClickUnderItsOwnKey() {
    Random random = new Random(7);
    ClickTally tally = new ClickTally();
    Map<String, Long> expected = new HashMap<>();
    long humans = 0;
    long bots = 0;
    for (int i = 0; i < 2_000; i++) {
      String botKind = random.nextInt(5) == 0 ? pick(random, BOT_KINDS) : "";
      // A third tagged, some of those with one tag only.
      boolean tagged = random.nextInt(3) == 0;
      String source = tagged ? pick(random, CAMPAIGN_TAGS) : "";
      String campaign = tagged && random.nextBoolean() ? pick(random, CAMPAIGN_TAGS) : "";
      Click click =
          new Click(
              io.tally.counting.Clicks.id("id-" + i),
              "abc",
              i,
              botKind,
              "v",
              ClickEvent.NO_RANGE_VISITOR,
              pick(random, COUNTRIES),
              pick(random, REFERRERS),
              pick(random, BROWSERS),
              pick(random, OSES),
              pick(random, DEVICES),
              false,
              false,
              source,
              "",
              campaign);
      tally.add(click);
      if (click.bot()) {
        bots++;
        expected.merge(key(ClickTally.BOT_KIND, botKind), 1L, Long::sum);
      } else {
        humans++;
        expected.merge(key(ClickTally.COUNTRY, click.country()), 1L, Long::sum);
        expected.merge(key(ClickTally.REFERRER, click.referrer()), 1L, Long::sum);
        expected.merge(key(ClickTally.BROWSER, click.browser()), 1L, Long::sum);
        expected.merge(key(ClickTally.OS, click.os()), 1L, Long::sum);
        expected.merge(key(ClickTally.DEVICE, click.device()), 1L, Long::sum);
        if (click.tagged()) {
          expected.merge(key(ClickTally.UTM_SOURCE, source), 1L, Long::sum);
          expected.merge(key(ClickTally.UTM_MEDIUM, ""), 1L, Long::sum);
          expected.merge(key(ClickTally.UTM_CAMPAIGN, campaign), 1L, Long::sum);
        }
      }
    }

    Map<String, Long> counted = new HashMap<>();
    for (int i = 0; i < tally.size; i++) {
      String key = key(tally.dimension(i), tally.values[i]);
      assertThat(counted.put(key, tally.counts[i])).as("key %s appears once", key).isNull();
    }
    assertThat(counted).isEqualTo(expected);
    assertThat(tally.clicks).isEqualTo(humans);
    assertThat(tally.botClicks).isEqualTo(bots);
  }

  @Test
  void aBoundedTallyKeepsTheValuesOfLeastRankWhateverOrderTheyComeIn() {
    List<Click> clicks = new ArrayList<>();
    for (int round = 0; round < 2; round++) {
      for (int i = 0; i < 100; i++) {
        clicks.add(Clicks.referred(round + "-" + i, "abc", i, "r" + i + ".com"));
      }
    }
    ClickTally forward = new ClickTally();
    clicks.forEach(click -> forward.add(click, 50));
    ClickTally backward = new ClickTally();
    List<Click> reversed = new ArrayList<>(clicks);
    Collections.reverse(reversed);
    reversed.forEach(click -> backward.add(click, 50));
    // As the counting meets them: partials of every value, the later minute's first.
    ClickTally laterHalf = new ClickTally();
    ClickTally earlierHalf = new ClickTally();
    clicks.forEach(click -> (click.ts() >= 50 ? laterHalf : earlierHalf).add(click));
    ClickTally merged = new ClickTally().addAll(laterHalf, 50).addAll(earlierHalf, 50);

    List<String> leastRanked =
        IntStream.range(0, 100)
            .mapToObj(i -> "r" + i + ".com")
            .sorted(ClickTally.BY_RANK)
            .limit(50)
            .toList();
    for (ClickTally tally : List.of(forward, backward, merged)) {
      assertThat(tally).isEqualTo(forward);
      for (String value : leastRanked) {
        assertThat(tally.count(ClickTally.REFERRER, value)).as(value).isEqualTo(2);
      }
      assertThat(tally.count(ClickTally.REFERRER, DimensionCount.OTHER))
          .as("the values add up to the clicks")
          .isEqualTo(100);
    }
    assertThat(forward.replacedDimensions)
        .as("met in this order, kept values were displaced")
        .isEqualTo(1 << Arrays.asList(ClickTally.DIMENSIONS).indexOf(ClickTally.REFERRER));
    for (int i = 0; i < 100; i++) {
      String value = "r" + i + ".com";
      assertThat(forward.count(ClickTally.REFERRER, value))
          .as("%s, found through the index", value)
          .isEqualTo(leastRanked.contains(value) ? 2 : 0);
    }
  }

  @Test
  void aValueSpelledLikeOtherIsCountedThereAndDisplacesNothing() {
    ClickTally tally = new ClickTally();
    List<String> byRank =
        IntStream.range(0, 10).mapToObj(i -> "r" + i + ".com").sorted(ClickTally.BY_RANK).toList();
    tally.add(Clicks.referred("1", "abc", 1, byRank.get(8)), 2);
    tally.add(Clicks.referred("2", "abc", 2, byRank.get(9)), 2);
    tally.add(Clicks.referred("3", "abc", 3, DimensionCount.OTHER), 2);
    tally.add(Clicks.referred("4", "abc", 4, byRank.get(0)), 2);

    assertThat(tally.count(ClickTally.REFERRER, byRank.get(0))).isEqualTo(1);
    assertThat(tally.count(ClickTally.REFERRER, byRank.get(8))).isEqualTo(1);
    assertThat(tally.count(ClickTally.REFERRER, DimensionCount.OTHER)).isEqualTo(2);
  }

  private static String key(String dimension, String value) {
    return dimension + "=" + value;
  }

  private static String pick(Random random, String[] values) {
    return values[random.nextInt(values.length)];
  }
}
