package io.tally.counting.periods;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.counting.records.Click;
import io.tally.counting.records.DimensionCount;
import io.tally.event.ClickEvent;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
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

  @Test
  void countsEachDimensionValueOfEveryClickUnderItsOwnKey() {
    Random random = new Random(7);
    ClickTally tally = new ClickTally();
    Map<String, Long> expected = new HashMap<>();
    long humans = 0;
    long bots = 0;
    for (int i = 0; i < 2_000; i++) {
      String botKind = random.nextInt(5) == 0 ? pick(random, BOT_KINDS) : "";
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
              false);
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
  void aBoundedMergeKeepsTheValuesItHasAndTheFirstNewOnesAndAddsUpTheRestUnderOther() {
    ClickTally many = new ClickTally();
    for (int round = 0; round < 2; round++) {
      for (int i = 0; i < 100; i++) {
        many.add(
            new Click(
                io.tally.counting.Clicks.id(round + "-" + i),
                "abc",
                i,
                "",
                "",
                ClickEvent.NO_RANGE_VISITOR,
                "DE",
                "r" + i + ".com",
                "Chrome",
                "Windows",
                "desktop",
                false,
                false));
      }
    }
    assertThat(many.count(ClickTally.REFERRER, "r99.com"))
        .as("found through the index")
        .isEqualTo(2);
    ClickTally bounded = new ClickTally();
    bounded.add(
        new Click(
            io.tally.counting.Clicks.id("x"),
            "abc",
            0,
            "",
            "",
            ClickEvent.NO_RANGE_VISITOR,
            "DE",
            "r70.com",
            "Chrome",
            "Windows",
            "desktop",
            false,
            false),
        50);

    bounded.addAll(many, 50);

    long referrers = 0;
    long kept = 0;
    for (int i = 0; i < bounded.size; i++) {
      if (bounded.dimension(i).equals(ClickTally.REFERRER)) {
        referrers += bounded.counts[i];
        kept += bounded.values[i].equals(DimensionCount.OTHER) ? 0 : 1;
      }
    }
    assertThat(kept).isEqualTo(50);
    assertThat(referrers)
        .as("the values add up to the clicks")
        .isEqualTo(bounded.clicks)
        .isEqualTo(201);
    assertThat(bounded.count(ClickTally.REFERRER, "r70.com"))
        .as("a value it had keeps counting")
        .isEqualTo(3);
    assertThat(bounded.count(ClickTally.REFERRER, "r0.com")).isEqualTo(2);
    assertThat(bounded.count(ClickTally.REFERRER, "r99.com")).isZero();
    assertThat(bounded.count(ClickTally.REFERRER, DimensionCount.OTHER))
        .isEqualTo(201 - 3 - 2 * 49);
  }

  private static String key(String dimension, String value) {
    return dimension + "=" + value;
  }

  private static String pick(Random random, String[] values) {
    return values[random.nextInt(values.length)];
  }
}
