package io.tally.bench.support;

import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.stream.Stream;

/**
 * Another version of Tally, built from a git ref of this clone into a worktree of its own under
 * {@code target/against/}, for the benchmarks' {@code --against}: the class path of that version's
 * local runtime, on which {@code bench pipeline} runs its click job in a child JVM, or the whole
 * version, whose {@code ./tally up} {@code bench stack} starts. A ref is built once per content
 * (its tree) and then taken as built.
 */
public final class OtherVersion {

  private static final long BUILD_MINUTES = 20;

  private OtherVersion() {}

  /** The class path of {@code ref}'s local runtime, building it first if it is not built yet. */
  public static String classPath(String ref, PrintStream out)
      throws IOException, InterruptedException {
    Path tree = worktree(ref);
    Path dependencies = tree.resolve("target").resolve("local-runtime-classpath.txt");
    Path building = tree.resolve("target").resolve("local-runtime-classpath.building");
    if (!Files.exists(dependencies)) {
      Files.createDirectories(dependencies.getParent());
      out.println("Building " + ref + "'s local runtime in " + tree + " ...");
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

  /**
   * The class path of the local runtime of this clone's working tree as it stands (its committed
   * and uncommitted changes to tracked files), built in a worktree of its own as {@link #classPath}
   * builds another version's, so that both sides of a comparison run their job on the same kind of
   * class path (the bench's own holds its modules and logging configuration too).
   */
  public static String workingTreeClassPath(PrintStream out)
      throws IOException, InterruptedException {
    Path repo = Path.of(run(Path.of("."), "git", "rev-parse", "--show-toplevel").trim());
    if (!run(repo, "git", "ls-files", "--others", "--exclude-standard").isBlank()) {
      out.println("Note: files git does not track are left out of this tree's build.");
    }
    // A commit of the working tree that no branch points to; empty when nothing changed.
    String snapshot = run(repo, "git", "stash", "create").trim();
    return classPath(snapshot.isEmpty() ? "HEAD" : snapshot, out);
  }

  /**
   * The folder of {@code ref}'s worktree with every module built as {@code ./tally} builds it (by
   * its own {@code ./tally}, the first time), ready for {@code ./tally up}.
   */
  public static Path builtTree(String ref, PrintStream out)
      throws IOException, InterruptedException {
    Path tree = worktree(ref);
    out.println("Building " + ref + " with its ./tally in " + tree + " (once per content) ...");
    run(tree, tree.resolve("tally").toString(), "help");
    return tree;
  }

  /**
   * The worktree of {@code ref}'s commit, added the first time its content is asked for: the folder
   * is named by the commit's tree, so commits of the same files (the working tree snapshotted twice
   * unchanged) share one build.
   */
  private static Path worktree(String ref) throws IOException, InterruptedException {
    Path repo = Path.of(run(Path.of("."), "git", "rev-parse", "--show-toplevel").trim());
    String commit = run(repo, "git", "rev-parse", "--verify", ref + "^{commit}").trim();
    String content = run(repo, "git", "rev-parse", "--verify", commit + "^{tree}").trim();
    Path tree = repo.resolve("target").resolve("against").resolve(content.substring(0, 12));
    if (!Files.exists(tree)) {
      // A worktree whose folder a clean deleted is still registered until pruned.
      run(repo, "git", "worktree", "prune");
      run(repo, "git", "worktree", "add", "--detach", tree.toString(), commit);
    }
    return tree;
  }

  private static String run(Path dir, String... command) throws IOException, InterruptedException {
    return Processes.run(dir, Duration.ofMinutes(BUILD_MINUTES), command);
  }
}
