package io.tally.clickjob.records;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Tests for {@link ClickTally}. */
class ClickTallyTest {

  // Look-alike values: same length, shared prefixes and suffixes, empty, and one that is another's tail.
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
      Click click = new Click(io.tally.clickjob.Clicks.id("id-" + i), "abc", i, botKind, "v", pick(random, COUNTRIES), pick(random, REFERRERS),
          pick(random, BROWSERS), pick(random, OSES), pick(random, DEVICES), false, false);
      tally.add(click);
      if (click.bot()) {
        bots++;
        expected.merge(ClickTally.key(ClickTally.BOT_KIND, botKind), 1L, Long::sum);
      } else {
        humans++;
        expected.merge(ClickTally.key(ClickTally.COUNTRY, click.country()), 1L, Long::sum);
        expected.merge(ClickTally.key(ClickTally.REFERRER, click.referrer()), 1L, Long::sum);
        expected.merge(ClickTally.key(ClickTally.BROWSER, click.browser()), 1L, Long::sum);
        expected.merge(ClickTally.key(ClickTally.OS, click.os()), 1L, Long::sum);
        expected.merge(ClickTally.key(ClickTally.DEVICE, click.device()), 1L, Long::sum);
      }
    }

    Map<String, Long> counted = new HashMap<>();
    for (int i = 0; i < tally.size; i++) {
      assertThat(counted.put(tally.keys[i], tally.counts[i])).as("key %s appears once", tally.keys[i]).isNull();
    }
    assertThat(counted).isEqualTo(expected);
    assertThat(tally.clicks).isEqualTo(humans);
    assertThat(tally.botClicks).isEqualTo(bots);
  }

  private static String pick(Random random, String[] values) {
    return values[random.nextInt(values.length)];
  }
}
