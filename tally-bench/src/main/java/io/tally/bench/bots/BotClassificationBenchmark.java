package io.tally.bench.bots;

import static io.tally.testing.Table.count;
import static io.tally.testing.Table.fmt;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tally.bench.support.BenchmarkCommand;
import io.tally.bench.support.Columns;
import io.tally.bench.support.Processes;
import io.tally.bench.support.Report;
import io.tally.counting.classify.BotKind;
import io.tally.counting.classify.UserAgentClassifier;
import io.tally.counting.classify.UserAgentFacts;
import io.tally.testing.Table;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code bench bots}: how well the click job's {@link UserAgentClassifier} tells bots from people,
 * on two public corpora fetched from the npm registry at run time (never kept in the repository):
 * recall on the example agents of known bots, and the false-positive rate on agents of real
 * browsers. Also the cost of building the shared analyzer and of one classification, uncached and
 * cached, and of a click whose agent is fresh against one whose agent is the same every time.
 */
@Command(
    name = "bots",
    description =
        "Bot recall and false-positive rate of the click job's user-agent classifier, on public"
            + " corpora fetched with `npm pack` (needs npm and the registry; no stack is started).")
public final class BotClassificationBenchmark extends BenchmarkCommand {

  /**
   * Where each corpus package keeps its list, relative to the tarball's {@code package/} folder.
   */
  private static final Map<String, String> CORPUS_FILES =
      Map.of(
          "crawler-user-agents", "crawler-user-agents.json",
          "user-agents", "dist/user-agents.json",
          "top-user-agents", "src/index.json");

  private static final String HUMAN = "human";
  private static final int FRESH_AGENTS = 100_000;
  private static final int FRESH_AGENT_ROUNDS = 3;
  private static final long FRESH_AGENT_SEED = 20261204L;

  @Option(
      names = "--bots",
      description = "npm package of known bots: patterns, each with example agents in `instances`",
      defaultValue = "crawler-user-agents@1.60.0")
  String botsPackage;

  @Option(
      names = "--browsers",
      description =
          "npm package of real browser agents: user-agents (visitor profiles with a"
              + " traffic weight and device category) or top-user-agents (a plain list)",
      defaultValue = "user-agents@2.1.198")
  String browsersPackage;

  @Option(
      names = "--corpus-dir",
      description =
          "where the tarballs are fetched and unpacked; a package already there is reused",
      defaultValue = "tally-bench/target/bot-corpora")
  Path corpusDir;

  @Option(
      names = "--examples",
      description = "misclassified agents printed on each side",
      defaultValue = "20")
  int examples;

  /** An example agent of a known bot, with the tags of the pattern it illustrates. */
  record BotAgent(String agent, List<String> tags) {}

  /**
   * A real browser's agent, with its share of the corpus's traffic and the device category the
   * corpus gives it.
   */
  record BrowserAgent(String agent, double weight, String deviceCategory) {}

  @Override
  protected void run(Report report, PrintStream out) throws Exception {
    Corpus bots = Corpus.fetch(botsPackage, corpusDir);
    Corpus browsers = Corpus.fetch(browsersPackage, corpusDir);
    List<BotAgent> botAgents = readBots(bots.list());
    List<BrowserAgent> browserAgents = readBrowsers(browsers.list());
    out.printf(
        Locale.ROOT,
        "bots: %s, %s distinct example agents; browsers: %s, %s distinct agents%n",
        bots.nameAndVersion(),
        count(botAgents.size()),
        browsers.nameAndVersion(),
        count(browserAgents.size()));

    UserAgentClassifier classifier = build(out);
    List<String> all =
        Stream.concat(
                botAgents.stream().map(BotAgent::agent),
                browserAgents.stream().map(BrowserAgent::agent))
            .toList();
    timePasses(classifier, all, out);
    report.ratio("bots.fresh_agents_over_one", "us_per_click", timeFreshAgents(classifier, out));

    double recall = measureBots(classifier, botAgents, bots, out);
    double[] falsePositives = measureBrowsers(classifier, browserAgents, browsers, out);
    report.ratio("bots.recall", "value", recall);
    report.ratio("bots.false_positive_rate", "value", falsePositives[0]);
    report.ratio("bots.false_positive_rate_weighted", "value", falsePositives[1]);
  }

  /** Builds the shared classifier and prints what that cost. */
  private static UserAgentClassifier build(PrintStream out) {
    long heapBefore = usedHeapAfterGc();
    long start = System.nanoTime();
    UserAgentClassifier classifier = UserAgentClassifier.shared();
    double seconds = (System.nanoTime() - start) / 1e9;
    long heapAfter = usedHeapAfterGc();
    out.printf(
        Locale.ROOT,
        "analyzer built in %.1f s; heap in use after GC grew by %d MiB (%d -> %d MiB)%n",
        seconds,
        (heapAfter - heapBefore) >> 20,
        heapBefore >> 20,
        heapAfter >> 20);
    return classifier;
  }

  /**
   * Times a first pass over every agent (Yauaa parses each one that no rule settles) and then the
   * best of five more, answered from the caches.
   */
  private static void timePasses(
      UserAgentClassifier classifier, List<String> agents, PrintStream out) {
    long heapBefore = usedHeapAfterGc();
    double first = timePass(classifier, agents);
    double cached = Double.MAX_VALUE;
    for (int i = 0; i < 5; i++) {
      cached = Math.min(cached, timePass(classifier, agents));
    }
    Table t = new Table("Cost per classification, one thread", "pass", "agents", "µs per agent");
    t.row("first (uncached)", count(agents.size()), fmt(first, 1));
    t.row("cached (best of 5 more)", count(agents.size()), fmt(cached, 2));
    t.note(
        String.format(
            Locale.ROOT,
            "Heap in use after GC grew by %d MiB with these agents in the caches.",
            (usedHeapAfterGc() - heapBefore) >> 20));
    t.print(out);
  }

  /**
   * What a click costs when every click carries an agent never seen before (a real browser's, with
   * fresh build numbers and a random token), against the same number of clicks with one agent:
   * rounds alternate and the best of each is kept, and no fresh agent is ever repeated. Returns the
   * ratio of the two.
   */
  private static double timeFreshAgents(UserAgentClassifier classifier, PrintStream out) {
    String base =
        "Mozilla/5.0 (Linux; Android 14; Pixel 8 Build/AP2A.%d.%03d) AppleWebKit/537.36 (KHTML,"
            + " like Gecko) Chrome/131.0.%d.%d Mobile Safari/537.36 (%08x%08x)";
    Random random = new Random(FRESH_AGENT_SEED);
    List<String> one =
        Collections.nCopies(
            FRESH_AGENTS, String.format(base, 240605, 4, 6778, 86, 0x5eed, 0xc0ffee));
    double oneBest = Double.MAX_VALUE;
    double freshBest = Double.MAX_VALUE;
    long parsesBefore = classifier.agentsParsed();
    for (int round = 0; round < FRESH_AGENT_ROUNDS; round++) {
      List<String> fresh = new ArrayList<>(FRESH_AGENTS);
      for (int i = 0; i < FRESH_AGENTS; i++) {
        int n = round * FRESH_AGENTS + i;
        fresh.add(
            String.format(
                base,
                240_000 + n,
                n % 1000,
                n % 7000,
                n % 200,
                random.nextInt(),
                random.nextInt()));
      }
      oneBest = Math.min(oneBest, timePass(classifier, one));
      freshBest = Math.min(freshBest, timePass(classifier, fresh));
    }
    long parses = classifier.agentsParsed() - parsesBefore;
    double ratio = freshBest / oneBest;
    Table t =
        new Table(
            "Cost of a click by the agents clicks carry, one thread (best of "
                + FRESH_AGENT_ROUNDS
                + " rounds)",
            "clicks",
            "agents",
            "µs per click");
    t.row("one agent", count(FRESH_AGENTS), fmt(oneBest, 2));
    t.row("each its own agent", count(FRESH_AGENTS), fmt(freshBest, 2));
    t.note(
        String.format(
            Locale.ROOT,
            "Ratio fresh/one: %s (goal ≤ 2). Yauaa parsed %s of the %s agents; the rest met an"
                + " answer of an agent that reduces alike.",
            fmt(ratio, 2),
            count(parses),
            count((long) FRESH_AGENTS * FRESH_AGENT_ROUNDS + 1)));
    t.print(out);
    return ratio;
  }

  private static double timePass(UserAgentClassifier classifier, List<String> agents) {
    long start = System.nanoTime();
    for (String agent : agents) {
      classifier.classify(agent, false);
    }
    return (System.nanoTime() - start) / 1e3 / agents.size();
  }

  /** Recall on the known bots, overall and by the corpus's tags; prints the misses. */
  private double measureBots(
      UserAgentClassifier classifier, List<BotAgent> agents, Corpus corpus, PrintStream out) {
    Map<String, Long> byKind = new HashMap<>();
    Map<String, Map<String, Long>> byTag = new TreeMap<>();
    List<String> missed = new ArrayList<>();
    for (BotAgent bot : agents) {
      UserAgentFacts facts = classifier.classify(bot.agent(), false);
      byKind.merge(kindOf(facts), 1L, Long::sum);
      for (String tag : bot.tags()) {
        byTag.computeIfAbsent(tag, k -> new HashMap<>()).merge(kindOf(facts), 1L, Long::sum);
      }
      if (!facts.bot()) {
        missed.add(
            String.format(
                "%s/%s/%s %s <- %s",
                facts.browser(), facts.os(), facts.device(), bot.tags(), bot.agent()));
      }
    }
    long caught = agents.size() - missed.size();
    double recall = (double) caught / agents.size();
    kindTable(
            "Known bots (" + corpus.nameAndVersion() + "): classified as", byKind, agents.size(), 3)
        .note(
            String.format(
                Locale.ROOT,
                "Recall: %s of %s example agents classified as bots = %s.",
                count(caught),
                count(agents.size()),
                fmt(recall, 4)))
        .print(out);

    Columns<Map.Entry<String, Map<String, Long>>> columns =
        new Columns<Map.Entry<String, Map<String, Long>>>()
            .and("tag", Map.Entry::getKey)
            .and("agents", tag -> count(total(tag.getValue())))
            .and(
                "recall",
                tag ->
                    fmt(
                        1.0
                            - (double) tag.getValue().getOrDefault(HUMAN, 0L)
                                / total(tag.getValue()),
                        3));
    for (String kind : kindsInOrder()) {
      columns = columns.and(kind, tag -> count(tag.getValue().getOrDefault(kind, 0L)));
    }
    columns
        .table(
            "Known bots by the corpus's tag (an agent counts under each tag of its pattern)",
            byTag.entrySet())
        .print(out);
    printExamples(out, "Known bots classified as human", missed);
    return recall;
  }

  /**
   * False positives on the real browsers, by distinct agent and by traffic weight (in that order);
   * prints them and the device check.
   */
  private double[] measureBrowsers(
      UserAgentClassifier classifier, List<BrowserAgent> agents, Corpus corpus, PrintStream out) {
    Map<String, Long> byKind = new HashMap<>();
    Map<String, Map<String, Long>> devices = new TreeMap<>();
    Map<String, Double> browserShare = new TreeMap<>();
    Map<String, Double> osShare = new TreeMap<>();
    List<String> falsePositives = new ArrayList<>();
    double weight = 0;
    double flaggedWeight = 0;
    for (BrowserAgent browser : agents) {
      UserAgentFacts facts = classifier.classify(browser.agent(), false);
      byKind.merge(kindOf(facts), 1L, Long::sum);
      weight += browser.weight();
      if (facts.bot()) {
        flaggedWeight += browser.weight();
        falsePositives.add(facts.botKind() + " <- " + browser.agent());
      } else {
        browserShare.merge(facts.browser(), browser.weight(), Double::sum);
        osShare.merge(facts.os(), browser.weight(), Double::sum);
      }
      if (!browser.deviceCategory().isEmpty()) {
        devices
            .computeIfAbsent(browser.deviceCategory(), k -> new TreeMap<>())
            .merge(facts.device(), 1L, Long::sum);
      }
    }
    double rate = (double) falsePositives.size() / agents.size();
    kindTable(
            "Real browsers (" + corpus.nameAndVersion() + "): classified as",
            byKind,
            agents.size(),
            4)
        .note(
            String.format(
                Locale.ROOT,
                "False-positive rate: %s of %s distinct agents classified as bots = %s;"
                    + " weighted by the corpus's traffic share: %s.",
                count(falsePositives.size()),
                count(agents.size()),
                fmt(rate, 4),
                fmt(flaggedWeight / weight, 4)))
        .note("Human browser families by traffic share: " + shares(browserShare, weight))
        .note("Human os families by traffic share: " + shares(osShare, weight))
        .print(out);
    if (!devices.isEmpty()) {
      Table t =
          new Table(
              "Device type against the corpus's device category (distinct agents)",
              "corpus says",
              "classifier says");
      devices.forEach((category, ours) -> t.row(category, ours.toString()));
      t.print(out);
    }
    printExamples(out, "Real browsers classified as bots", falsePositives);
    return new double[] {rate, flaggedWeight / weight};
  }

  private static String kindOf(UserAgentFacts facts) {
    return facts.bot() ? facts.botKind() : HUMAN;
  }

  /** Agents by what the classifier took them for, each bot kind and human, with their share. */
  private static Table kindTable(
      String title, Map<String, Long> byKind, long agents, int decimals) {
    Table t = new Table(title, "kind", "agents", "share");
    for (String kind : kindsInOrder()) {
      long n = byKind.getOrDefault(kind, 0L);
      t.row(kind, count(n), fmt((double) n / agents, decimals));
    }
    return t;
  }

  private static long total(Map<String, Long> counts) {
    return counts.values().stream().mapToLong(Long::longValue).sum();
  }

  private void printExamples(PrintStream out, String what, List<String> lines) {
    out.println();
    out.println("## " + what + " (first " + examples + " of " + lines.size() + ")");
    out.println();
    lines.stream().limit(examples).forEach(line -> out.println("- " + line));
  }

  private static List<String> kindsInOrder() {
    return Stream.concat(Arrays.stream(BotKind.values()).map(BotKind::label), Stream.of(HUMAN))
        .toList();
  }

  private static String shares(Map<String, Double> weights, double total) {
    return weights.entrySet().stream()
        .sorted(Map.Entry.<String, Double>comparingByValue().reversed())
        .map(e -> e.getKey() + " " + fmt(e.getValue() / total, 3))
        .collect(Collectors.joining(", "));
  }

  static List<BotAgent> readBots(Path file) throws IOException {
    Map<String, List<String>> tagsByAgent = new LinkedHashMap<>();
    for (JsonNode pattern : new ObjectMapper().readTree(file.toFile())) {
      List<String> tags = new ArrayList<>();
      pattern.path("tags").forEach(tag -> tags.add(tag.asText()));
      for (JsonNode instance : pattern.path("instances")) {
        tagsByAgent.computeIfAbsent(instance.asText(), k -> new ArrayList<>()).addAll(tags);
      }
    }
    return tagsByAgent.entrySet().stream()
        .map(e -> new BotAgent(e.getKey(), e.getValue().stream().distinct().toList()))
        .toList();
  }

  /**
   * Reads a list of agents: plain strings (weight 1 each) or objects with {@code userAgent}, {@code
   * weight} and {@code deviceCategory}.
   */
  static List<BrowserAgent> readBrowsers(Path file) throws IOException {
    Map<String, BrowserAgent> byAgent = new LinkedHashMap<>();
    for (JsonNode entry : new ObjectMapper().readTree(file.toFile())) {
      BrowserAgent agent =
          entry.isTextual()
              ? new BrowserAgent(entry.asText(), 1.0, "")
              : new BrowserAgent(
                  entry.path("userAgent").asText(),
                  entry.path("weight").asDouble(1.0),
                  entry.path("deviceCategory").asText(""));
      byAgent.merge(
          agent.agent(),
          agent,
          (a, b) -> new BrowserAgent(a.agent(), a.weight() + b.weight(), a.deviceCategory()));
    }
    return List.copyOf(byAgent.values());
  }

  private static long usedHeapAfterGc() {
    for (int i = 0; i < 3; i++) {
      System.gc();
    }
    return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
  }

  /**
   * An npm package fetched with {@code npm pack} and unpacked: its name, version and the list file
   * in it.
   */
  record Corpus(String name, String version, Path list) {

    String nameAndVersion() {
      return name + " " + version;
    }

    static Corpus fetch(String spec, Path corpusDir) throws IOException, InterruptedException {
      String name = spec.lastIndexOf('@') > 0 ? spec.substring(0, spec.lastIndexOf('@')) : spec;
      String file = CORPUS_FILES.get(name);
      if (file == null) {
        throw new IllegalArgumentException(
            "unknown corpus package " + name + "; known: " + CORPUS_FILES.keySet());
      }
      Path dir = corpusDir.toAbsolutePath().resolve(spec.replace('/', '_'));
      Path unpacked = dir.resolve("package");
      if (!Files.isRegularFile(unpacked.resolve(file))) {
        Files.createDirectories(dir);
        Processes.run(dir, Duration.ofMinutes(5), "npm", "pack", spec, "--silent");
        try (Stream<Path> files = Files.list(dir)) {
          Path tarball =
              files
                  .filter(p -> p.toString().endsWith(".tgz"))
                  .findFirst()
                  .orElseThrow(
                      () -> new IOException("npm pack " + spec + " left no tarball in " + dir));
          Processes.run(
              dir, Duration.ofMinutes(5), "tar", "-xzf", tarball.getFileName().toString());
        }
      }
      String version =
          new ObjectMapper()
              .readTree(unpacked.resolve("package.json").toFile())
              .path("version")
              .asText("?");
      return new Corpus(name, version, unpacked.resolve(file));
    }
  }
}
