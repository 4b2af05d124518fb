package io.tally.testing;

import io.tally.event.ClickEvent;
import io.tally.event.ClickRecords;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.Base64;
import java.util.UUID;
import org.apache.kafka.clients.producer.ProducerRecord;

/** Click events and click records made up by tests, benchmarks and fault scenarios. */
public final class ClickEvents {

  /** A desktop browser's user agent, which the classifier reads as a person's. */
  public static final String DESKTOP_BROWSER =
      "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko)"
          + " Chrome/131.0.0.0 Safari/537.36";

  private ClickEvents() {}

  /**
   * A click with only the fields counting needs: a browser's click, or for a bot the same browser's
   * {@code HEAD} request, which counts as a bot whatever the agent. (A click without a user agent
   * would count as an HTTP client's.)
   */
  public static ClickEvent minimal(UUID clickId, String code, long ts, boolean bot) {
    return ClickEvent.builder(clickId, code, ts).userAgent(DESKTOP_BROWSER).head(bot).build();
  }

  /**
   * A made-up day's visitor hash for {@code person}, in the form redirect-web makes them (22
   * base64url characters): the same for the same name, apart for another.
   */
  public static String visitor(String person) {
    try {
      byte[] digest =
          MessageDigest.getInstance("SHA-256").digest(person.getBytes(StandardCharsets.UTF_8));
      return Base64.getUrlEncoder().withoutPadding().encodeToString(Arrays.copyOf(digest, 16));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * A made-up visitor key across days for person {@code person} on link {@code link}: the same for
   * the same pair every day, apart for another link or person, never {@link
   * ClickEvent#NO_RANGE_VISITOR}, as redirect-web's keys are.
   */
  public static long rangeVisitor(long person, long link) {
    return (person + link * 0x9E3779B97F4A7C15L) | 1;
  }

  /**
   * The product's record of {@code event} ({@link ClickRecords#of}), sent to a chosen partition
   * instead of the partitioner's: for clicks that must reach every partition, such as the markers
   * that move each partition's watermark. Only the partition differs, so the layout stays the
   * product's.
   */
  public static ProducerRecord<String, byte[]> inPartition(
      String topic, int partition, ClickEvent event) {
    ProducerRecord<String, byte[]> record = ClickRecords.of(topic, event);
    return new ProducerRecord<>(
        topic, partition, record.timestamp(), record.key(), record.value(), record.headers());
  }
}
