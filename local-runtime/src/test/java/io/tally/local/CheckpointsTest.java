package io.tally.local;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Tests for {@link Checkpoints} on folders laid out as Flink writes them ({@code <job
 * id>/chk-N/_metadata}).
 */
class CheckpointsTest {

  @TempDir Path root;

  @Test
  void resumesFromTheNewestCompleteCheckpointOfAnyJob() throws Exception {
    checkpoint("job-a", 7, 1_000);
    Path newest = checkpoint("job-b", 2, 3_000);
    checkpoint("job-c", 9, 2_000);
    Files.createDirectories(root.resolve("job-b/chk-3")); // being written: no _metadata yet

    assertThat(Checkpoints.latest(root)).contains(newest);
  }

  @Test
  void keepsOnlyTheJobFolderOfTheCheckpointItResumesFrom() throws Exception {
    checkpoint("job-a", 7, 1_000);
    Path older = checkpoint("job-b", 1, 2_000);
    Path kept = checkpoint("job-b", 2, 3_000);
    Files.createDirectories(root.resolve("job-b/shared"));
    Files.writeString(
        root.resolve("job-b/shared/sst-1"), "state an incremental checkpoint refers to");
    Files.createDirectories(root.resolve("job-c")); // a run that died before its first checkpoint

    Checkpoints.deleteAllJobsBut(root, Checkpoints.latest(root));

    assertThat(Checkpoints.latest(root)).contains(kept);
    try (Stream<Path> jobs = Files.list(root)) {
      assertThat(jobs.map(p -> p.getFileName().toString())).containsExactly("job-b");
    }
    assertThat(older.resolve("_metadata")).exists();
    assertThat(root.resolve("job-b/shared/sst-1")).exists();
  }

  @Test
  void withNoCompleteCheckpointEveryJobFolderGoes() throws Exception {
    Files.createDirectories(root.resolve("job-a/chk-1"));

    Checkpoints.deleteAllJobsBut(root, Checkpoints.latest(root));

    try (Stream<Path> jobs = Files.list(root)) {
      assertThat(jobs).isEmpty();
    }
    assertThat(Checkpoints.latest(root)).isEqualTo(Optional.empty());
  }

  private Path checkpoint(String job, int n, long modifiedMillis) throws Exception {
    Path dir = Files.createDirectories(root.resolve(job).resolve("chk-" + n));
    Path metadata = Files.writeString(dir.resolve("_metadata"), "metadata");
    Files.setLastModifiedTime(metadata, FileTime.fromMillis(modifiedMillis));
    return dir;
  }
}
