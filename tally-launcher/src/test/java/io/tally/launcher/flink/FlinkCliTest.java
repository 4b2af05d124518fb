package io.tally.launcher.flink;

import static org.assertj.core.api.Assertions.assertThat;

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
  void withoutACauseTheFlinkExceptionLineIsTaken() {
    assertThat(FlinkCli.failure("org.apache.flink.client.cli.CliArgsException: Missing JAR file\n"))
        .isEqualTo("org.apache.flink.client.cli.CliArgsException: Missing JAR file");
  }
}
