package io.tally.launcher;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Optional;
import java.util.stream.Stream;

/** Finds the newest complete checkpoint the click job left behind, to resume from it. */
final class Checkpoints {

  private Checkpoints() {}

  /**
   * The newest {@code chk-N} folder under {@code root} (laid out as {@code root/<job id>/chk-N}) that
   * has its {@code _metadata} file, which Flink writes last, so a half-written checkpoint is never chosen.
   */
  static Optional<Path> latest(Path root) {
    if (!Files.isDirectory(root)) {
      return Optional.empty();
    }
    try (Stream<Path> files = Files.find(root, 3, (p, attrs) -> p.getFileName().toString().equals("_metadata"))) {
      return files
          .map(Path::getParent)
          .filter(dir -> dir.getFileName().toString().startsWith("chk-"))
          .max(Comparator.comparingLong(Checkpoints::modified));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot look for checkpoints in " + root, e);
    }
  }

  private static long modified(Path checkpoint) {
    try {
      return Files.getLastModifiedTime(checkpoint.resolve("_metadata")).toMillis();
    } catch (IOException e) {
      return Long.MIN_VALUE;
    }
  }
}
