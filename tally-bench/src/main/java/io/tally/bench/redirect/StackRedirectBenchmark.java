package io.tally.bench.redirect;

import static io.tally.testing.Table.fmt;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.common.io.MoreFiles;
import com.google.common.io.RecursiveDeleteOption;
import io.tally.bench.support.Columns;
import io.tally.bench.support.OtherVersion;
import io.tally.bench.support.Report;
import io.tally.embedded.GracefulStop;
import io.tally.embedded.Ports;
import java.io.IOException;
import java.io.PrintStream;
import java.io.RandomAccessFile;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code bench stack}: redirect latency on the whole stack as {@code ./tally up} runs it on this
 * machine (Kafka, PostgreSQL, the click job on its MiniCluster, redirect-web), offered at a fixed
 * rate from this JVM, outside the stack's processes. Two cells per start: counted links (Zipf), and
 * a disabled link, whose redirect sends no click event, so that a tail that is not counting's shows
 * as such. Every JVM of the stack logs its safepoints, and each cell reports how long the JVM that
 * answered the redirects stood still while it was measured. With {@code --against REF}, REF's
 * {@code ./tally up} and this build's start in turn, A B B A.
 */
public final class StackRedirectBenchmark {

  /**
   * What to offer and for how long.
   *
   * @param rate requests per second, open loop
   * @param connections keep-alive connections the requests are spread over
   * @param warmup load before each cell's measured part, not recorded
   * @param duration each cell's measured part
   * @param links counted links created through the API (the default create limit is 600 a minute)
   * @param keep whether each start's home, its data and logs, stays after the run
   * @param variants settings of {@code ./tally up} to try on this build, each {@code NAME=VALUE}
   *     (such as {@code TALLY_WEB_JAVA_OPTS=...}) and a stack start of its own; empty for its
   *     defaults
   * @param against a git ref whose {@code ./tally up} alternates with this build's
   */
  public record Settings(
      int rate,
      int connections,
      Duration warmup,
      Duration duration,
      int links,
      long seed,
      Path runDir,
      boolean keep,
      List<String> variants,
      Optional<String> against) {}

  /** How long a JVM was stopped at safepoints during a cell. */
  record Pauses(int count, double totalMs, double maxMs, String longest) {

    static final Pauses NONE = new Pauses(0, 0, 0, "–");

    private static final Pattern SAFEPOINT =
        Pattern.compile("Safepoint \"([^\"]+)\".*Total: (\\d+) ns");

    /**
     * The safepoints logged in {@code log} between the byte offsets {@code from} and {@code to}.
     */
    static Pauses read(Path log, long from, long to) throws IOException {
      if (to <= from) {
        return NONE;
      }
      byte[] bytes = new byte[(int) (to - from)];
      try (RandomAccessFile file = new RandomAccessFile(log.toFile(), "r")) {
        file.seek(from);
        file.readFully(bytes);
      }
      int count = 0;
      double total = 0;
      double max = 0;
      String longest = "–";
      Matcher m = SAFEPOINT.matcher(new String(bytes, StandardCharsets.UTF_8));
      while (m.find()) {
        double ms = Long.parseLong(m.group(2)) / 1e6;
        count++;
        total += ms;
        if (ms > max) {
          max = ms;
          longest = m.group(1);
        }
      }
      return new Pauses(count, total, max, longest);
    }

    @Override
    public String toString() {
      return count + " / " + fmt(totalMs, 0) + " / " + fmt(maxMs, 1) + " (" + longest + ")";
    }
  }

  /** A stack to start: a build's {@code ./tally up}, with one setting of its own if given. */
  private record Build(String label, Path root, Optional<String> setting) {}

  private record Cell(
      String build,
      int run,
      String workload,
      boolean ownJvm,
      LoadGenerator.Result result,
      Pauses redirectJvm,
      Pauses restOfStack) {}

  private static final Duration STARTUP_PATIENCE = Duration.ofMinutes(5);
  private static final String UP_LINE = "Tally is up.";

  /** The option by which ./tally up names redirect-web's JVM. */
  private static final String REDIRECT_WEB_JVM = "-Dtally.process=redirect-web";

  private final Settings settings;
  private final PrintStream out;
  private final ObjectMapper json = new ObjectMapper();
  private final HttpClient http = HttpClient.newHttpClient();

  public StackRedirectBenchmark(Settings settings, PrintStream out) {
    this.settings = settings;
    this.out = out;
  }

  public void run(Report report) throws Exception {
    Path root = Path.of("").toAbsolutePath();
    List<Build> builds = new ArrayList<>();
    if (settings.variants().isEmpty()) {
      builds.add(new Build("this", root, Optional.empty()));
    } else {
      settings
          .variants()
          .forEach(setting -> builds.add(new Build("this " + setting, root, Optional.of(setting))));
    }
    if (settings.against().isPresent()) {
      builds.add(
          new Build(
              "against", OtherVersion.builtTree(settings.against().get(), out), Optional.empty()));
    }
    // Each start once in order and once in reverse, so that a drift of the machine weighs alike.
    List<Build> order = new ArrayList<>(builds);
    if (builds.size() > 1) {
      List<Build> reversed = new ArrayList<>(builds);
      Collections.reverse(reversed);
      order.addAll(reversed);
    }
    List<Cell> cells = new ArrayList<>();
    Map<String, Integer> runs = new HashMap<>();
    for (Build build : order) {
      int run = runs.merge(build.label(), 1, Integer::sum);
      out.println("Starting " + build.label() + "'s ./tally up (run " + run + ") ...");
      cells.addAll(measure(build, run));
    }
    print(cells, builds.get(0).label(), report);
    if (!settings.keep()) {
      MoreFiles.deleteRecursively(settings.runDir(), RecursiveDeleteOption.ALLOW_INSECURE);
    }
  }

  private List<Cell> measure(Build build, int run) throws Exception {
    String folder = build.label().replaceAll("[^A-Za-z0-9=.-]+", "_") + "-" + run;
    Path home = Files.createDirectories(settings.runDir().resolve(folder));
    int httpPort = Ports.ephemeral();
    Map<String, String> env = new HashMap<>();
    env.put("TALLY_HOME", home.toString());
    env.put("TALLY_HTTP_PORT", String.valueOf(httpPort));
    env.put("TALLY_FLINK_UI_PORT", String.valueOf(Ports.ephemeral()));
    env.put("TALLY_KAFKA_PORT", String.valueOf(Ports.ephemeral()));
    env.put("TALLY_PG_PORT", String.valueOf(Ports.ephemeral()));
    env.put("TALLY_API_KEY", RedirectFixture.API_KEY);
    build
        .setting()
        .ifPresent(
            setting ->
                env.put(
                    setting.substring(0, setting.indexOf('=')),
                    setting.substring(setting.indexOf('=') + 1)));
    // Every JVM the stack starts, whatever its options, logs its stops to a file named by its pid.
    env.put("JAVA_TOOL_OPTIONS", "-Xlog:safepoint:file=" + home.resolve("safepoints-%p.log"));
    Process up = startUp(build.root(), env, home.resolve("up.out"));
    try {
      String base = "http://127.0.0.1:" + httpPort;
      List<String> codes = new ArrayList<>();
      for (int i = 0; i < settings.links(); i++) {
        codes.add(createLink(base, "https://example.com/articles/" + i));
      }
      String disabled = createLink(base, "https://example.com/withdrawn");
      send(HttpRequest.newBuilder(URI.create(base + "/api/links/" + disabled)).DELETE(), 200, 204);
      Optional<ProcessHandle> ownJvm =
          up.descendants()
              .filter(
                  p -> p.info().commandLine().map(c -> c.contains(REDIRECT_WEB_JVM)).orElse(false))
              .findFirst();
      long redirectPid = ownJvm.map(ProcessHandle::pid).orElse(up.pid());
      Path redirectLog = home.resolve("safepoints-" + redirectPid + ".log");
      Path stackLog = home.resolve("safepoints-" + up.pid() + ".log");
      List<Cell> cells = new ArrayList<>();
      for (Workload workload :
          List.of(Workload.zipf(codes, 1.0), Workload.sequence("disabled", List.of(disabled)))) {
        LoadGenerator.Result result;
        long redirectFrom;
        long stackFrom;
        long redirectTo;
        long stackTo;
        try (LoadGenerator load =
            LoadGenerator.startAtRate(
                httpPort, workload, settings.connections(), settings.seed(), settings.rate())) {
          Thread.sleep(settings.warmup().toMillis());
          redirectFrom = size(redirectLog);
          stackFrom = size(stackLog);
          load.phase(0);
          Thread.sleep(settings.duration().toMillis());
          redirectTo = size(redirectLog);
          stackTo = size(stackLog);
          result = load.stop().get(0);
        }
        // A stop logged across either offset is cut in two and not counted: at most one per edge.
        cells.add(
            new Cell(
                build.label(),
                run,
                workload.name(),
                ownJvm.isPresent(),
                result,
                Pauses.read(redirectLog, redirectFrom, redirectTo),
                ownJvm.isPresent() ? Pauses.read(stackLog, stackFrom, stackTo) : Pauses.NONE));
      }
      return cells;
    } finally {
      stop(up);
      if (!settings.keep()) {
        MoreFiles.deleteRecursively(home, RecursiveDeleteOption.ALLOW_INSECURE);
      }
    }
  }

  /** {@code ./tally up} of the build at {@code root}, with only the {@code TALLY_*} set here. */
  private static Process startUp(Path root, Map<String, String> env, Path output)
      throws IOException, InterruptedException {
    ProcessBuilder builder =
        new ProcessBuilder(root.resolve("tally").toString(), "up")
            .directory(root.toFile())
            .redirectErrorStream(true)
            .redirectOutput(output.toFile());
    builder.environment().keySet().removeIf(name -> name.startsWith("TALLY_"));
    builder.environment().putAll(env);
    Process up = builder.start();
    long deadline = System.nanoTime() + STARTUP_PATIENCE.toNanos();
    // Read as Latin-1: whatever the output's bytes, a failed start's lines can be shown.
    while (!Files.readString(output, StandardCharsets.ISO_8859_1).contains(UP_LINE)) {
      if (!up.isAlive() || System.nanoTime() > deadline) {
        stop(up);
        List<String> lines = Files.readAllLines(output, StandardCharsets.ISO_8859_1);
        throw new IllegalStateException(
            "./tally up in "
                + root
                + " did not start; its last lines:\n"
                + String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size())));
      }
      Thread.sleep(500);
    }
    return up;
  }

  /** Ctrl-C's way (SIGTERM: the stack closes in order), then SIGKILL for whatever is left. */
  private static void stop(Process up) throws InterruptedException {
    List<ProcessHandle> children = up.descendants().toList();
    up.destroy();
    GracefulStop.awaitOrKill(up.toHandle(), "./tally up", Duration.ofMinutes(2));
    children.forEach(ProcessHandle::destroyForcibly);
  }

  private String createLink(String base, String url) throws IOException, InterruptedException {
    String body =
        send(
            HttpRequest.newBuilder(URI.create(base + "/api/links"))
                .header("Content-Type", "application/json")
                .POST(
                    HttpRequest.BodyPublishers.ofString(
                        json.writeValueAsString(Map.of("url", url)))),
            201);
    return json.readTree(body).get("code").asText();
  }

  private String send(HttpRequest.Builder request, int... expected)
      throws IOException, InterruptedException {
    HttpResponse<String> response =
        http.send(
            request.header("Authorization", "Bearer " + RedirectFixture.API_KEY).build(),
            HttpResponse.BodyHandlers.ofString());
    for (int status : expected) {
      if (response.statusCode() == status) {
        return response.body();
      }
    }
    throw new IllegalStateException(
        response.request().method()
            + " "
            + response.uri()
            + " answered "
            + response.statusCode()
            + ": "
            + response.body());
  }

  private static long size(Path file) throws IOException {
    return Files.exists(file) ? Files.size(file) : 0;
  }

  /** The table, and the figures of {@code mine}: this build's stack, its first options if many. */
  private void print(List<Cell> cells, String mine, Report report) {
    new Columns<Cell>()
        .and("build", Cell::build)
        .and("run", Cell::run)
        .and("links", Cell::workload)
        .and("redirect-web", c -> c.ownJvm() ? "own JVM" : "in the stack's JVM")
        .and("answered req/s", c -> fmt(c.result().throughput(), 0))
        .and(LoadGenerator.LATENCY, Cell::result)
        .and("its JVM stopped: count / total ms / longest ms", Cell::redirectJvm)
        .and("the stack's JVM stopped", c -> c.ownJvm() ? c.restOfStack().toString() : "(same)")
        .table(
            "bench stack: redirects on the whole ./tally up stack from outside, open loop ("
                + settings.rate()
                + " req/s, "
                + settings.connections()
                + " connections, "
                + settings.duration().toSeconds()
                + " s per cell after "
                + settings.warmup().toSeconds()
                + " s of warm-up)",
            cells)
        .note(
            "Each request is due at a fixed time and its latency counts from then (no coordinated"
                + " omission). \"disabled\": a link that answers 410 and sends no click event, so"
                + " its errors are expected. Stops: every safepoint the JVM logged"
                + " (-Xlog:safepoint) while the cell was measured, with the cause of the longest.")
        .print(out);

    double p99 = worstP99(cells, mine, "zipf");
    List<String> variants = settings.variants();
    for (int v = 1; v < variants.size(); v++) {
      report.ratio(
          "stack.redirect[" + variants.get(v).replace(' ', '_') + "]/first",
          "p99",
          worstP99(cells, "this " + variants.get(v), "zipf")
              / worstP99(cells, "this " + variants.get(0), "zipf"));
    }
    report.ratio("stack.redirect", "p99_ms", p99);
    report.target(
        "local stack: redirect p99 ≤ 10 ms at " + settings.rate() + " req/s offered",
        fmt(p99, 2) + " ms",
        p99 <= 10,
        mine + ": counted links, worst run; from outside, open loop");
    if (settings.against().isPresent()) {
      report.ratio("stack.redirect.this/against", "p99", p99 / worstP99(cells, "against", "zipf"));
      report.ratio(
          "stack.redirect.disabled.this/against",
          "p99",
          worstP99(cells, mine, "disabled") / worstP99(cells, "against", "disabled"));
    }
  }

  private static double worstP99(List<Cell> cells, String build, String workloadPrefix) {
    return cells.stream()
        .filter(c -> c.build().equals(build) && c.workload().startsWith(workloadPrefix))
        .map(c -> c.result().ms(99))
        .max(Comparator.naturalOrder())
        .orElseThrow();
  }
}
