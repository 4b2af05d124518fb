package io.tally.local.flink;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Tests for {@link FlinkCli}'s one-line reading of what Flink's CLI printed when it failed. */
class FlinkCliTest {

  @Test
  void theInnermostCauseNamesTheFailure() {
    String printed =
        """
        ------------------------------------------------------------
         The program finished with the following exception:

        org.apache.flink.client.program.ProgramInvocationException: The main method caused an error: Failed to execute job 'tally-reconcile'.
        \tat org.apache.flink.client.program.PackagedProgram.callMainMethod(PackagedProgram.java:373)
        Caused by: org.apache.flink.util.FlinkException: Failed to execute job 'tally-reconcile'.
        \t... 12 more
        Caused by: java.util.concurrent.CompletionException: java.io.FileNotFoundException: Cannot find checkpoint or savepoint file/directory 'file:/tmp/nope' on file system 'file'.
        \t... 3 more
        """;
    assertThat(FlinkCli.failure(printed))
        .isEqualTo(
            "java.util.concurrent.CompletionException: java.io.FileNotFoundException: Cannot find"
                + " checkpoint or savepoint file/directory 'file:/tmp/nope' on file system"
                + " 'file'.");
  }

  @Test
  void theDatabasePasswordGoesToTheCliEnvironmentNotItsCommandLine() {
    FlinkCli.JobArgs spaced =
        FlinkCli.JobArgs.withoutSecrets(
            List.of("--jdbc-url", "jdbc:postgresql://db/tally", "--jdbc-password", "s3cret", "-p"));
    FlinkCli.JobArgs joined =
        FlinkCli.JobArgs.withoutSecrets(List.of("--jdbc-password=s3cret", "--jdbc-user", "tally"));

    assertThat(spaced.args()).containsExactly("--jdbc-url", "jdbc:postgresql://db/tally", "-p");
    assertThat(spaced.environment()).containsExactly(Map.entry("TALLY_PG_PASSWORD", "s3cret"));
    assertThat(joined.args()).containsExactly("--jdbc-user", "tally");
    assertThat(joined.environment()).containsExactly(Map.entry("TALLY_PG_PASSWORD", "s3cret"));
    assertThat(String.join(" ", spaced.args() + " " + joined.args())).doesNotContain("s3cret");
  }

  @Test
  void withoutACauseTheFlinkExceptionLineIsTaken() {
    assertThat(FlinkCli.failure("org.apache.flink.client.cli.CliArgsException: Missing JAR file\n"))
        .isEqualTo("org.apache.flink.client.cli.CliArgsException: Missing JAR file");
  }
}
