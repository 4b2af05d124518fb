package io.tally.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.event.ClickEvent;
import io.tally.event.ClickRecords;
import java.time.Instant;
import java.util.UUID;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;

/** Tests for {@link ClickEvents}. */
class ClickEventsTest {

  private static final long TS = Instant.parse("2026-12-01T10:00:00Z").toEpochMilli();
  private static final ClickEvent EVENT =
      ClickEvents.minimal(
          UUID.fromString("019ace00-0000-7000-8000-000000000001"), "viral", TS, false);

  @Test
  void aClickSentToAChosenPartitionHasTheProductsLayout() {
    ProducerRecord<String, byte[]> record = ClickEvents.inPartition("clicks", 3, EVENT);

    assertThat(record.partition()).isEqualTo(3);
    assertThat(record.topic()).isEqualTo("clicks");
    assertThat(record.key()).isNull();
    assertThat(record.timestamp()).isEqualTo(TS);
    assertThat(record.value()).isEqualTo(ClickRecords.of("clicks", EVENT).value());
  }

  @Test
  void aMinimalBotClickIsAHeadRequestOfTheSameBrowser() {
    ClickEvent bot = ClickEvents.minimal(EVENT.clickId(), "viral", TS, true);

    assertThat(bot.head()).isTrue();
    assertThat(bot.userAgent()).isEqualTo(EVENT.userAgent()).isEqualTo(ClickEvents.DESKTOP_BROWSER);
  }
}
