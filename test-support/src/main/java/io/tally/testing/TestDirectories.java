package io.tally.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Fresh folders for embedded services under the module's {@code target/}, so {@code mvn clean}
 * removes them.
 */
final class TestDirectories {

  private TestDirectories() {}

  static Path fresh(String prefix) {
    try {
      Path root = Path.of("target", "embedded").toAbsolutePath();
      Files.createDirectories(root);
      return Files.createTempDirectory(root, prefix + "-");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
