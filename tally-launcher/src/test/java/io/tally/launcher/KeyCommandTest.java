package io.tally.launcher;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Tests for {@code ./tally key}, which a second shell uses to find the stack's API key. */
class KeyCommandTest {

  @TempDir Path home;

  private StackSettings settings(Map<String, String> env) {
    return StackSettings.beside(env, home.resolve("no-running.env"));
  }

  @Test
  void printsTheKeysKeptInTheStacksHome() throws Exception {
    Files.writeString(home.resolve("api-key"), "dev-write\n");
    Files.writeString(home.resolve("read-api-key"), "read-only\n");
    StackSettings settings = settings(Map.of("TALLY_HOME", home.toString()));

    assertThat(KeyCommand.key(settings, false)).isEqualTo("dev-write");
    assertThat(KeyCommand.key(settings, true)).isEqualTo("read-only");
  }

  @Test
  void theKeyGivenToTheStackWinsOverTheKeptOne() throws Exception {
    Files.writeString(home.resolve("api-key"), "dev-write\n");
    Files.writeString(home.resolve("read-api-key"), "read-only\n");
    StackSettings settings =
        settings(Map.of("TALLY_HOME", home.toString(), "TALLY_API_KEY", "given-key"));

    assertThat(KeyCommand.key(settings, false)).isEqualTo("given-key");
    assertThat(KeyCommand.key(settings, true)).isEqualTo("read-only");
  }

  @Test
  void beforeTheFirstStartItSaysWhereTheKeyWillBeAndMakesNone() {
    StackSettings settings = settings(Map.of("TALLY_HOME", home.toString()));

    assertThatThrownBy(() -> KeyCommand.key(settings, false))
        .hasMessageContaining(home.resolve("api-key").toString())
        .hasMessageContaining("./tally up");
    assertThat(home.resolve("api-key")).doesNotExist();
  }
}
