package io.tally.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Tests for {@link HomeSecrets}: a secret is made once, kept, and readable by its owner alone. */
class HomeSecretsTest {

  @TempDir Path home;

  @Test
  void makesTheSecretOnceAndKeepsIt() {
    Path file = home.resolve("api-key");

    String made = HomeSecrets.readOrCreate(file, "tally_");

    assertThat(made).startsWith("tally_").hasSizeGreaterThan(30);
    assertThat(HomeSecrets.readOrCreate(file, "tally_")).isEqualTo(made);
  }

  @Test
  void theFileIsReadableByItsOwnerOnly() throws Exception {
    Path file = home.resolve("secrets/ip-hash-secret");

    HomeSecrets.readOrCreate(file, "");

    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file)))
        .isEqualTo("rw-------");
  }
}
