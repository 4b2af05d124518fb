package io.tally.bench.pipeline;

import io.tally.event.ClickEvent;
import io.tally.event.ClickRecords;
import io.tally.testing.ClickStream;
import io.tally.testing.Clients;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A generated click log with known ground truth, drawn from the one generator tests and chaos draw
 * from ({@link ClickStream}): {@code events} records over {@code codes} links (Zipf), a share of
 * them repeats of a recent click (same id, same click: what a producer retry or a replay delivers),
 * event times spread evenly over {@code [from, to)} with up to 1.5 s of jitter (inside the job's 5
 * s out-of-orderness bound, so no click is late). The same seed gives the same log.
 */
final class ClickDataset {

  /** What was written, and what the counts must add up to. */
  record Truth(
      long events,
      long distinct,
      long duplicates,
      long distinctBots,
      long rows,
      Instant from,
      Instant to,
      long bytes) {}

  private static final String CODE_PREFIX = "L";
  private static final int SEND_ROUNDS = 5;
  private static final Logger LOG = LoggerFactory.getLogger(ClickDataset.class);

  private ClickDataset() {}

  /**
   * Generates the log and writes every record with {@code producer}, returning once all are stored.
   */
  static Truth write(
      Producer<String, byte[]> producer,
      String topic,
      int events,
      int codes,
      double duplicateShare,
      Instant from,
      Duration span,
      long seed,
      UnaryOperator<ClickEvent> reshape) {
    long start = from.toEpochMilli();
    Distinct distinct = new Distinct(start, (int) (span.toMillis() / 60_000) + 2, codes);
    ClickStream stream =
        new ClickStream(
            distinct, CODE_PREFIX, codes, start, span.toMillis(), events, duplicateShare, seed);
    long bytes = 0;
    Queue<ProducerRecord<String, byte[]>> refused = new ConcurrentLinkedQueue<>();
    while (stream.hasNext()) {
      var record = ClickRecords.of(topic, reshape.apply(stream.next()));
      bytes += record.value().length;
      producer.send(record, refusedInto(refused, record));
    }
    sendAgainUntilStored(producer, refused);
    return new Truth(
        events,
        distinct.clicks,
        stream.duplicates(),
        distinct.bots,
        distinct.rows.cardinality(),
        from,
        from.plus(span),
        bytes);
  }

  /**
   * The click with a user agent no other click carries (a copy of it carries the same): the last
   * number in its agent made the click id's own, so that a browser stays the browser and a bot the
   * bot, and only the caches see something new.
   */
  static ClickEvent withFreshAgent(ClickEvent click) {
    Matcher lastNumber = LAST_NUMBER.matcher(click.userAgent());
    if (!lastNumber.find()) {
      return click;
    }
    String fresh =
        click.userAgent().substring(0, lastNumber.start(1))
            + (Math.floorMod(click.clickId().getLeastSignificantBits(), 9_000_000L) + 1_000_000L)
            + click.userAgent().substring(lastNumber.end(1));
    return click.toBuilder().userAgent(fresh).build();
  }

  private static final Pattern LAST_NUMBER = Pattern.compile("(\\d+)\\D*$");

  /** Counts the distinct clicks: how many, how many of bots, and their (link, minute) rows. */
  private static final class Distinct implements Consumer<ClickEvent> {
    private final long start;
    private final int minutes;
    private final BitSet rows;
    private long clicks;
    private long bots;

    Distinct(long start, int minutes, int codes) {
      this.start = start;
      this.minutes = minutes;
      this.rows = new BitSet(codes * minutes);
    }

    @Override
    public void accept(ClickEvent click) {
      clicks++;
      if (Clients.facts(click).bot()) {
        bots++;
      }
      int link = Integer.parseInt(click.code().substring(CODE_PREFIX.length()));
      rows.set(link * minutes + (int) ((click.ts() - start) / 60_000));
    }
  }

  /**
   * Sends again what the broker refused (a loaded embedded broker can answer a batch with a
   * sequence error): the truth counts every record, so a lost one would leave the benchmark waiting
   * for it. A record stored twice is one more duplicate, which the job drops.
   */
  private static void sendAgainUntilStored(
      Producer<String, byte[]> producer, Queue<ProducerRecord<String, byte[]>> refused) {
    for (int round = 0; ; round++) {
      producer.flush();
      if (refused.isEmpty()) {
        return;
      }
      if (round == SEND_ROUNDS) {
        throw new IllegalStateException(
            refused.size() + " records still refused after " + SEND_ROUNDS + " rounds");
      }
      List<ProducerRecord<String, byte[]>> again = new ArrayList<>(refused);
      refused.clear();
      LOG.warn("sending again {} records the broker refused", again.size());
      for (ProducerRecord<String, byte[]> record : again) {
        producer.send(record, refusedInto(refused, record));
      }
    }
  }

  private static Callback refusedInto(
      Queue<ProducerRecord<String, byte[]>> refused, ProducerRecord<String, byte[]> record) {
    return (metadata, error) -> {
      if (error != null) {
        if (refused.isEmpty()) {
          LOG.warn("the broker refused a click record", error);
        }
        refused.add(record);
      }
    };
  }
}
