package io.tally.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every relative link in README.md and docs/ leads somewhere: the file exists, and a {@code
 * #fragment} into a Markdown file names one of its headings as GitHub makes anchors of them. Here
 * because this module checks the files users deploy and read from the repository as it is, not any
 * code.
 */
class DocsLinksTest {

  private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
  private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)\\)");
  private static final Pattern HEADING = Pattern.compile("^#{1,6}\\s+(.*?)\\s*#*\\s*$");
  private static final Pattern NOT_IN_ANCHOR = Pattern.compile("[^\\p{L}\\p{N}_\\- ]");

  @Test
  void everyRelativeLinkInTheReadmeAndDocsResolves() throws IOException {
    List<Path> documents = new ArrayList<>(List.of(ROOT.resolve("README.md")));
    try (Stream<Path> docs = Files.walk(ROOT.resolve("docs"))) {
      docs.filter(path -> path.toString().endsWith(".md")).sorted().forEach(documents::add);
    }
    List<String> broken = new ArrayList<>();
    int checked = 0;
    for (Path document : documents) {
      Matcher link = LINK.matcher(Files.readString(document));
      while (link.find()) {
        String target = link.group(1);
        if (target.matches("^(https?|mailto):.*")) {
          continue;
        }
        checked++;
        String file = target.contains("#") ? target.substring(0, target.indexOf('#')) : target;
        String fragment = target.contains("#") ? target.substring(target.indexOf('#') + 1) : "";
        Path resolved = file.isEmpty() ? document : document.getParent().resolve(file).normalize();
        if (!Files.exists(resolved)) {
          broken.add(ROOT.relativize(document) + ": " + target + " (no such file)");
        } else if (!fragment.isEmpty()
            && resolved.toString().endsWith(".md")
            && !anchors(resolved).contains(fragment)) {
          broken.add(ROOT.relativize(document) + ": " + target + " (no such heading)");
        }
      }
    }

    assertThat(checked).as("relative links found").isGreaterThan(10);
    assertThat(broken).isEmpty();
  }

  @Test
  void anAnchorIsTheHeadingAsGitHubWritesIt() {
    assertThat(anchor("The standalone cluster: start, submit, savepoint (issue 13)"))
        .isEqualTo("the-standalone-cluster-start-submit-savepoint-issue-13");
    assertThat(anchor("`bench all` on a fresh clone")).isEqualTo("bench-all-on-a-fresh-clone");
  }

  /**
   * The anchors of a Markdown file's headings, outside fenced code; a repeated heading's gets -1,
   * -2 ....
   */
  private static Set<String> anchors(Path markdown) throws IOException {
    Set<String> anchors = new HashSet<>();
    Map<String, Integer> seen = new HashMap<>();
    boolean fenced = false;
    for (String line : Files.readAllLines(markdown)) {
      if (line.startsWith("```")) {
        fenced = !fenced;
        continue;
      }
      Matcher heading = HEADING.matcher(line);
      if (!fenced && heading.matches()) {
        String anchor = anchor(heading.group(1));
        int times = seen.merge(anchor, 1, Integer::sum);
        anchors.add(times == 1 ? anchor : anchor + "-" + (times - 1));
      }
    }
    return anchors;
  }

  private static String anchor(String heading) {
    return NOT_IN_ANCHOR
        .matcher(heading.strip().toLowerCase(Locale.ROOT))
        .replaceAll("")
        .replace(' ', '-');
  }
}
