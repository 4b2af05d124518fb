package io.tally.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * Checks that docs/benchmarks.md's table of current figures names only commands that run: every
 * {@code ./tally bench <sub> [flags]} in its command column must name a subcommand of {@link
 * BenchCommand} and only flags that subcommand takes, as picocli reads them from the command
 * classes. A figure whose command was renamed or lost a flag then fails the build instead of
 * misleading whoever tries to reproduce it.
 */
class BenchmarksDocTest {

  private static final Path BENCHMARKS_DOC = Path.of("../docs/benchmarks.md");
  private static final String FIGURES_HEADING = "## Current figures";
  private static final String COMMAND_COLUMN = "command";
  private static final String BENCH_PREFIX = "./tally bench ";
  private static final Pattern CODE_SPAN = Pattern.compile("`([^`]+)`");

  @Test
  void everyCommandInTheFiguresTableRunsAsWritten() throws IOException {
    List<String> commands = benchCommandsOfFiguresTable(Files.readAllLines(BENCHMARKS_DOC));

    assertThat(commands)
        .as("./tally bench commands in the current figures table")
        .hasSizeGreaterThan(10);
    assertThat(problemsIn(commands)).isEmpty();
  }

  @Test
  void reportsAMisspeltSubcommandOrFlag() {
    List<String> commands =
        List.of(
            "./tally bench pipelin --events 1000",
            "./tally bench pipeline --event 1000 --raw-runs 1",
            "./tally bench redirect --against main",
            "./tally bench reconcile --events=2000000 --raw-runs 1");

    assertThat(problemsIn(commands))
        .containsExactly(
            "./tally bench pipelin --events 1000: no subcommand 'pipelin'",
            "./tally bench pipeline --event 1000 --raw-runs 1: 'pipeline' has no option --event",
            "./tally bench redirect --against main: 'redirect' has no option --against");
  }

  @Test
  void findsTheCommandsInTheTableUnderTheHeadingOnly() {
    List<String> doc =
        List.of(
            "## Running them",
            "| what | command |",
            "|:--|:--|",
            "| not this one | `./tally bench redirect --nope` |",
            FIGURES_HEADING,
            "",
            "| figure | value | command |",
            "|:--|--:|:--|",
            "| a | 1 | `./tally bench stats --curve-days 0` |",
            "| b | 2 | `TALLY_BENCH_JAVA_OPTS=-Xmx1g ./tally bench reconcile --codes 1` |",
            "| c | 3 | `./tally up --cluster` |",
            "## Next",
            "| figure | value | command |",
            "| d | 4 | `./tally bench bots` |");

    assertThat(benchCommandsOfFiguresTable(doc))
        .containsExactly("./tally bench stats --curve-days 0", "./tally bench reconcile --codes 1");
  }

  /**
   * The {@code ./tally bench} commands in the command column of the first table under the figures
   * heading, each from {@code ./tally bench} on (an environment variable before it is dropped).
   */
  static List<String> benchCommandsOfFiguresTable(List<String> lines) {
    int heading = lines.indexOf(FIGURES_HEADING);
    assertThat(heading).as("heading '%s' in %s", FIGURES_HEADING, BENCHMARKS_DOC).isNotNegative();
    List<String> commands = new ArrayList<>();
    int commandColumn = -1;
    boolean inTable = false;
    for (String line : lines.subList(heading + 1, lines.size())) {
      if (line.startsWith("## ") || (inTable && !line.startsWith("|"))) {
        break;
      }
      if (!line.startsWith("|")) {
        continue;
      }
      List<String> cells = cells(line);
      if (!inTable) {
        inTable = true;
        commandColumn = cells.indexOf(COMMAND_COLUMN);
        assertThat(commandColumn).as("a '%s' column in %s", COMMAND_COLUMN, line).isNotNegative();
        continue;
      }
      if (cells.stream().allMatch(cell -> cell.matches(":?-+:?"))) {
        continue;
      }
      Matcher code = CODE_SPAN.matcher(cells.get(commandColumn));
      while (code.find()) {
        int start = code.group(1).indexOf(BENCH_PREFIX);
        if (start >= 0) {
          commands.add(code.group(1).substring(start).trim());
        }
      }
    }
    return commands;
  }

  /** What is wrong with each command, as {@code ./tally bench}'s command line defines it. */
  static List<String> problemsIn(List<String> commands) {
    CommandLine bench = new CommandLine(new BenchCommand());
    List<String> problems = new ArrayList<>();
    for (String command : commands) {
      List<String> words =
          Arrays.asList(command.substring(BENCH_PREFIX.length()).trim().split("\\s+"));
      String subcommandName = words.get(0);
      CommandLine subcommand = bench.getSubcommands().get(subcommandName);
      if (subcommand == null) {
        problems.add(command + ": no subcommand '" + subcommandName + "'");
        continue;
      }
      for (String word : words.subList(1, words.size())) {
        if (!word.startsWith("--")) {
          continue;
        }
        String flag = word.contains("=") ? word.substring(0, word.indexOf('=')) : word;
        if (subcommand.getCommandSpec().findOption(flag) == null) {
          problems.add(command + ": '" + subcommandName + "' has no option " + flag);
        }
      }
    }
    return problems;
  }

  private static List<String> cells(String row) {
    String inner = row.strip();
    inner = inner.substring(1, inner.endsWith("|") ? inner.length() - 1 : inner.length());
    return Arrays.stream(inner.split("\\|", -1)).map(String::strip).toList();
  }
}
