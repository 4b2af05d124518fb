package io.tally.bench.pipeline;

import io.tally.bench.support.Processes;
import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.stream.Stream;

/**
 * Another version of Tally, built from a git ref of this clone into a worktree of its own under
 * {@code target/against/}, for {@code bench pipeline --against}: what it gives is the class path of
 * that version's local runtime, on which the click job runs in a child JVM. A ref is built once per
 * commit and then taken as built.
 */
final class OtherVersion {

  private static final long BUILD_MINUTES = 20;

  private OtherVersion() {}

  /** The class path of {@code ref}'s local runtime, building it first if it is not built yet. */
  static String classPath(String ref, PrintStream out) throws IOException, InterruptedException {
    Path repo = Path.of(run(Path.of("."), "git", "rev-parse", "--show-toplevel").trim());
    String commit = run(repo, "git", "rev-parse", "--verify", ref + "^{commit}").trim();
    Path tree = repo.resolve("target").resolve("against").resolve(commit.substring(0, 12));
    Path dependencies = tree.resolve("target").resolve("local-runtime-classpath.txt");
    Path building = tree.resolve("target").resolve("local-runtime-classpath.building");
    if (!Files.exists(dependencies)) {
      if (!Files.exists(tree)) {
        // A worktree whose folder a clean deleted is still registered until pruned.
        run(repo, "git", "worktree", "prune");
        run(repo, "git", "worktree", "add", "--detach", tree.toString(), commit);
      }
      Files.createDirectories(dependencies.getParent());
      out.println("Building " + ref + " (" + commit.substring(0, 12) + ") in " + tree + " ...");
      run(
          tree,
          tree.resolve("mvnw").toString(),
          "-B",
          "-ntp",
          "-q",
          "package",
          "dependency:build-classpath",
          "-pl",
          "local-runtime",
          "-am",
          "-DskipTests",
          "-Dmdep.includeScope=runtime",
          "-Dmdep.outputFile=" + building);
      // Only a build that finished names the ref built.
      Files.move(building, dependencies);
    }
    Path jar;
    try (Stream<Path> files = Files.list(tree.resolve("local-runtime").resolve("target"))) {
      jar =
          files
              .filter(f -> f.getFileName().toString().matches("local-runtime-[^-]+.*\\.jar"))
              .filter(f -> !f.getFileName().toString().matches(".*-(sources|tests)\\.jar"))
              .findFirst()
              .orElseThrow(() -> new IllegalStateException("no local-runtime jar in " + tree));
    }
    return jar + File.pathSeparator + Files.readString(dependencies).trim();
  }

  private static String run(Path dir, String... command) throws IOException, InterruptedException {
    return Processes.run(dir, Duration.ofMinutes(BUILD_MINUTES), command);
  }
}
