package io.tally.counting.serde;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.counting.records.RecountKey;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Random;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * The byte order BATCH mode sorts recount keys in (signed bytes, then length, as its comparator)
 * groups what the recount needs together.
 */
class RecountKeySerializerTest {

  @Test
  void sortedByTheirBytesEachLinksKeysAndEachVisitorsDayComeTogether() {
    Random random = new Random(7);
    // Times whose bytes differ across the sign of a byte, and around zero.
    long t = 1_764_000_000_000L;
    long[] times = {
      t, t + 0x7F, t + 0x80, t + 0xFF, t + 0x100, t + 0x8000, t + 0x80_0000, -1, 0, 1
    };
    List<RecountKey> keys = new ArrayList<>();
    // Codes that are prefixes of one another, visitor hashes and ids across the sign of a byte.
    for (String code : List.of("ab", "abc", "b", "ab0", "a")) {
      for (int visitor = 0; visitor < 4; visitor++) {
        for (int day = 20_000; day < 20_002; day++) {
          for (int click = 0; click < 5; click++) {
            keys.add(
                new RecountKey(
                    code,
                    visitor > 0,
                    visitor > 0 ? random.nextLong() >>> (visitor * 8) | visitor : 0,
                    visitor * 0x80L,
                    visitor > 0 ? day : 0,
                    times[random.nextInt(times.length)],
                    random.nextLong(),
                    random.nextLong()));
          }
        }
      }
    }
    Collections.shuffle(keys, random);

    List<RecountKey> sorted = new ArrayList<>(keys);
    sorted.sort((a, b) -> Arrays.compare(bytes(a), bytes(b)));

    assertThat(runs(sorted, RecountKey::code)).as("one run per link").hasSize(5);
    for (int i = 1; i < sorted.size(); i++) {
      RecountKey before = sorted.get(i - 1);
      RecountKey after = sorted.get(i);
      if (after.sameVisitorDay(before)) {
        assertThat(after.ts())
            .as("a visitor's day in time order")
            .isGreaterThanOrEqualTo(before.ts());
      }
    }
    assertThat(runs(sorted, k -> k.code() + "/" + k.visitorHigh() + "/" + k.day()))
        .as("one run per link and visitor's day")
        .hasSize(
            (int)
                sorted.stream().map(k -> k.code() + k.visitorHigh() + k.day()).distinct().count());
  }

  @Test
  void readsBackWhatItWrote() throws IOException {
    RecountKey key =
        new RecountKey("abc", true, -1L, Long.MIN_VALUE, 20_500, 1_764_000_000_123L, 42L, -42L);

    assertThat(Bytes.roundTrip(RecountKeySerializer.INSTANCE, key)).isEqualTo(key);
  }

  /** Counts the runs of equal values: each group is one run when the groups come together. */
  private static <T> List<T> runs(List<RecountKey> keys, Function<RecountKey, T> group) {
    List<T> runs = new ArrayList<>();
    for (RecountKey key : keys) {
      T value = group.apply(key);
      if (runs.isEmpty() || !runs.get(runs.size() - 1).equals(value)) {
        runs.add(value);
      }
    }
    assertThat(new LinkedHashSet<>(runs)).as("no group in two runs").hasSameSizeAs(runs);
    return runs;
  }

  private static byte[] bytes(RecountKey key) {
    return Bytes.written(RecountKeySerializer.INSTANCE, key);
  }
}
