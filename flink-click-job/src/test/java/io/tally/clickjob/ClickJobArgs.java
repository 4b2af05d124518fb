package io.tally.clickjob;

import io.tally.testing.KafkaExtension;
import io.tally.testing.PostgresExtension;
import java.util.ArrayList;
import java.util.List;

/** The flags that point the click job at the tests' broker and database, as its own login. */
public final class ClickJobArgs {

  private ClickJobArgs() {}

  /**
   * Reading {@code topic} as consumer group {@code groupId}, dead letters to {@code dlqTopic},
   * writing as a login of the {@code tally_click_job} role; then {@code more}.
   */
  public static ClickJobOptions connectedTo(
      KafkaExtension kafka,
      PostgresExtension postgres,
      String topic,
      String dlqTopic,
      String groupId,
      String... more) {
    List<String> args =
        new ArrayList<>(
            List.of(
                "--bootstrap-servers",
                kafka.bootstrapServers(),
                "--topic",
                topic,
                "--dlq-topic",
                dlqTopic,
                "--group-id",
                groupId,
                "--jdbc-url",
                postgres.jdbcUrl(),
                "--jdbc-user",
                postgres.loginWith("tally_click_job"),
                "--jdbc-password",
                PostgresExtension.LOGIN_PASSWORD));
    args.addAll(List.of(more));
    return ClickJobOptions.parse(args.toArray(String[]::new));
  }
}
