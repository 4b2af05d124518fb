package io.tally.reconcile;

import io.tally.testing.KafkaExtension;
import io.tally.testing.PostgresExtension;
import java.util.ArrayList;
import java.util.List;

/** The flags that point a reconcile run at the tests' broker and database, as its own login. */
final class ReconcileArgs {

  private ReconcileArgs() {}

  /**
   * Reading {@code topic}, writing as a login of the {@code tally_reconcile} role; then {@code
   * more}.
   */
  static List<String> connectedTo(
      KafkaExtension kafka, PostgresExtension postgres, String topic, String... more) {
    List<String> args =
        new ArrayList<>(
            List.of(
                "--bootstrap-servers",
                kafka.bootstrapServers(),
                "--topic",
                topic,
                "--jdbc-url",
                postgres.jdbcUrl(),
                "--jdbc-user",
                postgres.loginWith("tally_reconcile"),
                "--jdbc-password",
                PostgresExtension.LOGIN_PASSWORD));
    args.addAll(List.of(more));
    return args;
  }
}
