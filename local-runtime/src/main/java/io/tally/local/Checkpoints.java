package io.tally.local;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * Finds the newest complete checkpoint the click job left behind, to resume from it, and clears the
 * older ones.
 */
public final class Checkpoints {

  private Checkpoints() {}

  /**
   * The newest {@code chk-N} folder under {@code root} (laid out as {@code root/<job id>/chk-N})
   * that has its {@code _metadata} file, which Flink writes last, so a half-written checkpoint is
   * never chosen.
   */
  public static Optional<Path> latest(Path root) {
    if (!Files.isDirectory(root)) {
      return Optional.empty();
    }
    try (Stream<Path> files =
        Files.find(root, 3, (p, attrs) -> p.getFileName().toString().equals("_metadata"))) {
      return files
          .map(Path::getParent)
          .filter(dir -> dir.getFileName().toString().startsWith("chk-"))
          .max(Comparator.comparingLong(Checkpoints::modified));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot look for checkpoints in " + root, e);
    }
  }

  /**
   * Deletes the folders of every job under {@code root} but the one that holds {@code kept}: each
   * start of the job checkpoints into a folder of its own, and without this every restart would
   * leave a full copy of the state behind. The kept folder stays whole, since an incremental
   * checkpoint refers to files that earlier checkpoints of its job wrote.
   */
  public static void deleteAllJobsBut(Path root, Optional<Path> kept) {
    if (!Files.isDirectory(root)) {
      return;
    }
    Optional<Path> keptJob = kept.map(Path::getParent);
    try (Stream<Path> jobs = Files.list(root)) {
      for (Path job : jobs.filter(Files::isDirectory).toList()) {
        if (keptJob.map(k -> !k.equals(job)).orElse(true)) {
          deleteRecursively(job);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot delete old checkpoints in " + root, e);
    }
  }

  private static void deleteRecursively(Path dir) throws IOException {
    try (Stream<Path> paths = Files.walk(dir)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.delete(p);
      }
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
