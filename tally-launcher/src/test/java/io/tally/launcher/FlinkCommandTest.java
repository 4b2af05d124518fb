package io.tally.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.embedded.Ports;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * Tests for {@link FlinkCommand}'s answers to the mistakes a user can make without any cluster
 * running: one line on stderr and a non-zero exit, never a stack trace or a wait.
 */
class FlinkCommandTest {

  @TempDir Path dir;

  @Test
  void noClusterAtTheRestAddressIsOneLineAndExitOne() {
    int port = Ports.ephemeral();
    Result result = run("flink", "list", "--rest", "localhost:" + port);
    assertThat(result.exit).isEqualTo(1);
    assertThat(result.err.lines().toList())
        .singleElement()
        .asString()
        .startsWith("tally: no Flink cluster answers at localhost:" + port);
  }

  @Test
  void aSavepointPathWithoutMetadataIsRefusedBeforeAnythingIsSubmitted() {
    Result result =
        run("flink", "run", "--from-savepoint", dir.resolve("savepoint-nope").toString());
    assertThat(result.exit).isEqualTo(1);
    assertThat(result.err.trim())
        .isEqualTo(
            "tally: no savepoint at "
                + dir.resolve("savepoint-nope")
                + " (no _metadata file there)");
  }

  @Test
  void aMalformedRestAddressNamesTheExpectedForm() {
    Result result = run("flink", "savepoint", "--rest", "localhost");
    assertThat(result.exit).isEqualTo(1);
    assertThat(result.err.trim()).isEqualTo("tally: --rest takes HOST:PORT, not 'localhost'");
  }

  @Test
  void helpIsHelpNotAJobFlag() {
    // run passes unknown flags on to the job: --help must still be the command's own.
    Result result = run("flink", "run", "--help");
    assertThat(result.exit).isZero();
    assertThat(result.out)
        .contains("Usage: tally flink run", "--from-savepoint=PATH", "--rest=HOST:PORT");
  }

  private record Result(int exit, String out, String err) {}

  private static Result run(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cli = TallyCommand.commandLine();
    cli.setOut(new PrintWriter(out, true));
    cli.setErr(new PrintWriter(err, true));
    int exit = cli.execute(args);
    return new Result(exit, out.toString(), err.toString());
  }
}
