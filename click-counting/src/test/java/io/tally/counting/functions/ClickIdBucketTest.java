package io.tally.counting.functions;

import static io.tally.counting.Clicks.at;
import static io.tally.counting.Clicks.id;
import static io.tally.counting.Clicks.idAt;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tally.event.ClickIds;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class ClickIdBucketTest {

  @Test
  void keepsAnIdOnceAndStoresEachNewOneOnceInAboutElevenBytes() {
    ClickIdBucket bucket = new ClickIdBucket();
    List<UUID> ids = new ArrayList<>();
    for (int i = 0; i < 1_000; i++) {
      ids.add(idAt("click-" + i, at(i * 37L)));
    }
    for (UUID id : ids) {
      assertThat(add(bucket, id)).isTrue();
    }
    for (UUID id : ids) {
      assertThat(add(bucket, id)).as("a copy").isFalse();
    }

    byte[] chunk = bucket.takeUnstored();
    assertThat(chunk.length)
        .as("sorted and delta-coded: 11 bytes an id for a thousand ids of a minute")
        .isLessThanOrEqualTo(1 + 11 * 1_000);
    assertThat(bucket.takeUnstored()).as("nothing new since").isNull();
    ClickIdBucket restored = new ClickIdBucket();
    restored.addStored(chunk);
    assertThat(restored.size()).isEqualTo(1_000);
    for (UUID id : ids) {
      assertThat(add(restored, id)).as("a copy after a restore").isFalse();
    }
    assertThat(restored.takeUnstored()).as("what was stored is not stored again").isNull();
  }

  @Test
  void idsOfOneMinuteThatDifferInAnyBitAreTwo() {
    UUID id = idAt("a", at(1_234));
    UUID otherMillisecond =
        new UUID(id.getMostSignificantBits() + (1L << 16), id.getLeastSignificantBits());
    UUID otherRandA = new UUID(id.getMostSignificantBits() ^ 1, id.getLeastSignificantBits());
    UUID otherRandB = new UUID(id.getMostSignificantBits(), id.getLeastSignificantBits() ^ 1);
    ClickIdBucket bucket = new ClickIdBucket();

    assertThat(List.of(id, otherMillisecond, otherRandA, otherRandB))
        .allSatisfy(
            each -> assertThat(ClickIdBucket.minuteOf(each)).isEqualTo(ClickIdBucket.minuteOf(id)))
        .allSatisfy(each -> assertThat(add(bucket, each)).isTrue());
  }

  @Test
  void fitsVersionSevenIdsOnlyAndReadsTheirMinute() {
    UUID made = ClickIds.next();
    assertThat(ClickIdBucket.fits(made)).isTrue();
    long now = Math.floorDiv(System.currentTimeMillis(), 60_000L);
    assertThat(ClickIdBucket.minuteOf(made)).isBetween(now - 1, now);
    assertThat(ClickIdBucket.minuteOf(idAt("a", at(59_999)))).isEqualTo(at(0) / 60_000);
    assertThat(ClickIdBucket.fits(id("name-based"))).isFalse();
    assertThat(ClickIdBucket.fits(UUID.randomUUID())).isFalse();
  }

  @Test
  void anIdAloneInItsChunkTakesAtMostTwelveBytesAndTheChunkItsFormat() {
    UUID last = idAt("last", at(59_999));
    ClickIdBucket bucket = new ClickIdBucket();
    add(bucket, last);
    byte[] chunk = bucket.takeUnstored();

    assertThat(chunk).hasSizeLessThanOrEqualTo(1 + 12);
    ClickIdBucket restored = new ClickIdBucket();
    restored.addStored(chunk);
    assertThat(add(restored, last)).isFalse();
    chunk[0] = 99;
    assertThatThrownBy(() -> new ClickIdBucket().addStored(chunk))
        .hasMessageContaining("unknown format");
  }

  private static boolean add(ClickIdBucket bucket, UUID id) {
    return bucket.add(ClickIdBucket.high(id), id.getLeastSignificantBits());
  }
}
