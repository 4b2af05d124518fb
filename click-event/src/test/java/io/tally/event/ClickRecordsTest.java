package io.tally.event;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.UUID;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;

/** Tests for {@link ClickRecords}. */
class ClickRecordsTest {

  private static final long TS = Instant.parse("2026-12-01T10:00:00Z").toEpochMilli();
  private static final ClickEvent EVENT =
      TestClicks.browserClick(UUID.fromString("019ace00-0000-7000-8000-000000000001"), "viral", TS);

  @Test
  void aClickHasNoKeySoThePartitionerSpreadsALinkOverEveryPartition() {
    ProducerRecord<String, byte[]> record = ClickRecords.of("clicks", EVENT);

    assertThat(record.key()).isNull();
    assertThat(record.partition()).isNull();
    assertThat(record.topic()).isEqualTo("clicks");
    assertThat(record.timestamp()).isEqualTo(TS);
    assertThat(ClickEventCodec.decode(record.value(), TS)).isEqualTo(new Decoded.Valid(EVENT));
  }
}
