package io.tally.counting;

import java.io.Serializable;
import java.util.List;
import java.util.Locale;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/**
 * How clicks are counted into rows: the flags the streaming job and reconciliation must agree on,
 * mixed into each job's options.
 */
public final class CountingOptions implements Serializable {

  private int maxDimensionValues = 200;

  @Option(
      names = "--max-dimension-values",
      defaultValue = "200",
      description =
          "values kept per link, hour or day and dimension, those of least rank whatever"
              + " order they come in; the clicks of the others are counted under (other)")
  void maxDimensionValues(int values) {
    if (values < 1) {
      throw new CommandLine.ParameterException(
          new CommandLine(this), "--max-dimension-values must be at least 1, not " + values);
    }
    this.maxDimensionValues = values;
  }

  public int maxDimensionValues() {
    return maxDimensionValues;
  }

  /** More fragments than any list of one's own agents needs; each is checked on every click. */
  static final int MAX_CRAWLER_AGENTS = 64;

  static final int MAX_CRAWLER_AGENT_LENGTH = 200;

  private List<String> crawlerAgents = List.of();

  @Option(
      names = "--crawler-agents",
      split = ",",
      paramLabel = "FRAGMENT",
      description =
          "user agents containing any of these fragments (case-insensitive) count as crawlers,"
              + " besides the built-in rules: an uptime monitor or an in-house tool of your own."
              + " Changing the list changes what is counted from then on; a start without state"
              + " recounts the open day with it")
  void crawlerAgents(List<String> fragments) {
    if (fragments.size() > MAX_CRAWLER_AGENTS) {
      throw new CommandLine.ParameterException(
          new CommandLine(this),
          "--crawler-agents takes at most " + MAX_CRAWLER_AGENTS + " fragments");
    }
    for (String fragment : fragments) {
      if (fragment.isBlank() || fragment.length() > MAX_CRAWLER_AGENT_LENGTH) {
        throw new CommandLine.ParameterException(
            new CommandLine(this),
            "--crawler-agents fragments must be 1 to "
                + MAX_CRAWLER_AGENT_LENGTH
                + " characters, not \""
                + fragment
                + "\"");
      }
    }
    this.crawlerAgents = fragments.stream().map(f -> f.strip().toLowerCase(Locale.ROOT)).toList();
  }

  /** Lower-cased fragments of user agents that count as crawlers besides the built-in rules. */
  public List<String> crawlerAgents() {
    return crawlerAgents;
  }
}
