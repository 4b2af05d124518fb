package io.tally.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.event.ClickEvent;
import io.tally.event.ClickEventCodec;
import io.tally.testing.ClickEvents;
import io.tally.testing.KafkaExtension;
import io.tally.testing.PostgresExtension;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A viral link's recount in a bounded heap: a million clicks on one link, from 50,000 visitors and
 * more referrers than a breakdown keeps, recounted by the reconcile job's own {@code main} in a JVM
 * of {@value #HEAP} heap. A recount that held the link's ids as a set runs out of that heap
 * (tried); dedup keyed by click id and the marks keyed by (link, visitor) hold one key at a time,
 * and the link's periods are bounded, so the run completes and every count is exact.
 */
class ViralLinkRecountITCase {

  @RegisterExtension static final KafkaExtension KAFKA = new KafkaExtension();
  @RegisterExtension static final PostgresExtension POSTGRES = new PostgresExtension();

  private static final int CLICKS = 1_000_000;
  private static final int VISITORS = 50_000;
  private static final int REFERRERS = 500;
  private static final String HEAP = "-Xmx224m";

  @TempDir Path work;

  @Test
  void aMillionClicksOnOneLinkAreRecountedExactlyInASmallHeap() throws Exception {
    POSTGRES.truncateAll();
    String topic = KAFKA.newTopic("viral", 2);
    Instant hour = Instant.now().truncatedTo(ChronoUnit.HOURS).minus(Duration.ofHours(3));
    produce(topic, hour.toEpochMilli());

    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(Arrays.asList(System.getProperty("flink.jvm.opens").trim().split("\\s+")));
    command.add(HEAP);
    command.add("-XX:+ExitOnOutOfMemoryError");
    command.addAll(List.of("-cp", System.getProperty("java.class.path")));
    command.add(ReconcileJob.class.getName());
    command.addAll(
        ReconcileArgs.connectedTo(
            KAFKA,
            POSTGRES,
            topic,
            "--from",
            hour.toString(),
            "--to",
            hour.plus(Duration.ofHours(1)).toString(),
            "--parallelism",
            "1"));
    Path output = work.resolve("reconcile.out");
    Process reconcile =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(output.toFile())
            .start();
    assertThat(reconcile.waitFor(10, TimeUnit.MINUTES)).as("finished").isTrue();
    assertThat(reconcile.exitValue()).as(tail(output)).isZero();

    Map<String, List<Long>> hourly =
        POSTGRES.rows("SELECT code, clicks, bot_clicks, visitors FROM click_hourly");
    assertThat(hourly)
        .containsExactly(Map.entry("viral", List.of((long) CLICKS, 0L, (long) VISITORS)));
    assertThat(POSTGRES.rows("SELECT code, sum(clicks) FROM click_counts GROUP BY code"))
        .containsExactly(Map.entry("viral", List.of((long) CLICKS)));
    Map<String, List<Long>> referrers =
        POSTGRES.rows(
            "SELECT value, clicks FROM click_dimensions_hourly WHERE dimension = 'referrer'");
    assertThat(referrers).hasSize(201).containsKey("(other)");
    assertThat(referrers.values().stream().mapToLong(v -> v.get(0)).sum()).isEqualTo(CLICKS);
  }

  /** The clicks, in time order over the hour, each once, spread over the topic's partitions. */
  private static void produce(String topic, long hourStart) {
    Random random = new Random(11);
    String[] visitors = new String[VISITORS];
    for (int v = 0; v < VISITORS; v++) {
      visitors[v] = ClickEvents.visitor("viral-visitor-" + v);
    }
    try (KafkaProducer<String, byte[]> producer =
        KAFKA.producer(
            Map.of(
                ProducerConfig.LINGER_MS_CONFIG,
                20,
                ProducerConfig.BATCH_SIZE_CONFIG,
                256 * 1024,
                ProducerConfig.COMPRESSION_TYPE_CONFIG,
                "lz4"))) {
      for (int i = 0; i < CLICKS; i++) {
        long ts = hourStart + (long) i * 3_600_000 / CLICKS;
        ClickEvent click =
            ClickEvent.builder(new UUID(random.nextLong(), random.nextLong()), "viral", ts)
                .visitor(visitors[i % VISITORS])
                .userAgent(ClickEvents.DESKTOP_BROWSER)
                .referrerDomain("r" + (i % REFERRERS) + ".example")
                .country("DE")
                .build();
        producer.send(new ProducerRecord<>(topic, i % 2, ts, null, ClickEventCodec.encode(click)));
      }
    }
  }

  private static String tail(Path output) throws IOException {
    List<String> lines = Files.readAllLines(output);
    return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
  }
}
