package io.tally.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.Map;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** Tests for the help of {@code ./tally reconcile}, which passes the recount's own flags on. */
class ReconcileHelpTest {

  @Test
  void theHelpIsThisCommandsWithItsOwnOptionsAndTheStacksDefaults() {
    StringWriter out = new StringWriter();
    CommandLine.Model.CommandSpec reconcile =
        TallyCommand.commandLine().getSubcommands().get("reconcile").getCommandSpec();

    TallyCommand.Reconcile.usage(
        reconcile,
        Map.of(
            "--bootstrap-servers", "localhost:19092",
            "--jdbc-url", "jdbc:postgresql://localhost:15432/postgres",
            "--jdbc-user", "tally"),
        new PrintWriter(out, true));

    assertThat(out.toString())
        .contains("Usage: tally reconcile", "--cluster", "--rest=HOST:PORT", "--from=<from>")
        .contains("Default: localhost:19092", "15432/postgres", "Default: tally")
        .doesNotContain("batch-reconcile", "localhost:9092", "localhost:5432/");
  }

  @Test
  void helpAnswersBeforeAnythingIsReached() {
    StringWriter out = new StringWriter();
    CommandLine cli = TallyCommand.commandLine();
    cli.setOut(new PrintWriter(out, true));

    assertThat(cli.execute("reconcile", "--help")).isZero();
    assertThat(out.toString()).startsWith("Usage: tally reconcile");
  }
}
