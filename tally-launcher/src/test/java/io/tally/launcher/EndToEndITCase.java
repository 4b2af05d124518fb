package io.tally.launcher;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.time.Duration;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The walking skeleton on real parts, started the way {@code ./tally up} starts it: a link created over
 * HTTP, followed N times, shows N clicks in PostgreSQL with no further traffic; after a stop and a start
 * on the same data the counts are still there, the job restores the checkpoint that holds the clicks
 * (Flink says so: a start without state would count the same, since it rereads the day), and new clicks
 * are added without losing or doubling the old ones.
 */
class EndToEndITCase {

  private static final Pattern TOTAL = Pattern.compile("(?m)^total  (\\d+)  (\\d+)$");

  @TempDir Path home;

  @Test
  void clicksFollowedOverHttpAreCountedInPostgresAndSurviveARestart() throws Exception {
    String code;
    try (LocalStack stack = LocalStack.start(settings())) {
      code = client(stack).createLink("https://example.com/end-to-end");
      client(stack).follow(code, 7);

      awaitTotal(stack, code, 7);
      assertThat(stack.resumedFrom()).isEmpty();
      assertThat(StackProbe.restoredCheckpoint(stack.flinkUiUrl())).as("a first start has no state").isEmpty();
      assertThat(StackProbe.status(stack.flinkUiUrl() + "/jars")).as("the Flink UI takes no jars").isEqualTo(404);
      // Counts show within seconds (early firings), before the first checkpoint: stop after one that holds them.
      StackProbe.awaitCheckpointAfterNow(stack.flinkUiUrl());
    }

    try (LocalStack stack = LocalStack.start(settings())) {
      String checkpoint = stack.resumedFrom().orElseThrow().getFileName().toString();
      assertThat(StackProbe.restoredCheckpoint(stack.flinkUiUrl()))
          .as("the job restored its retained checkpoint").hasValueSatisfying(path -> assertThat(path).endsWith(checkpoint));
      assertThat(total(stack, code)).as("counts kept across the restart").isEqualTo(7);

      client(stack).follow(code, 3);
      awaitTotal(stack, code, 10);
      // A bot's click on the same link in every partition, after all the others (replays included): once
      // they are counted, every human click before them has been.
      int markers = StackProbe.botClickInEveryPartition(stack.kafkaBootstrap(), code);
      await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofSeconds(1)).until(() -> bots(stack, code) == markers);
      assertThat(total(stack, code)).as("nothing counted twice after the restart").isEqualTo(10);
    }
  }

  private StackSettings settings() {
    return new StackSettings(home, 0, 0, 0, 0, PortRange.ANY, Optional.empty(), "postgres", "", Optional.of("test-api-key"));
  }

  private static LinkClient client(LocalStack stack) {
    return new LinkClient(stack.redirectUrl(), stack.apiKey());
  }

  private void awaitTotal(LocalStack stack, String code, long expected) {
    // Open minutes show their partial totals within seconds; the bound leaves room for a slow start.
    await().atMost(Duration.ofSeconds(150)).pollInterval(Duration.ofSeconds(2))
        .until(() -> total(stack, code) == expected);
  }

  /** The human total as {@code ./tally counts CODE} prints it. */
  private static long total(LocalStack stack, String code) throws Exception {
    return Long.parseLong(totalLine(stack, code).group(1));
  }

  /** The bot total as {@code ./tally counts CODE} prints it. */
  private static long bots(LocalStack stack, String code) throws Exception {
    return Long.parseLong(totalLine(stack, code).group(2));
  }

  private static Matcher totalLine(LocalStack stack, String code) throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (Connection c = DriverManager.getConnection(stack.jdbcUrl(), "postgres", "")) {
      CountsReport.print(c, code, new PrintStream(out, true, StandardCharsets.UTF_8));
    }
    Matcher total = TOTAL.matcher(out.toString(StandardCharsets.UTF_8));
    assertThat(total.find()).isTrue();
    return total;
  }
}
