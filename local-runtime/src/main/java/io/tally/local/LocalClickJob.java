package io.tally.local;

import io.tally.clickjob.ClickCountJob;
import io.tally.clickjob.ClickJobOptions;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

/**
 * The click job on a Flink MiniCluster with its web UI, set up the same way wherever Tally runs it
 * on one machine ({@code ./tally up}, the benchmarks, the chaos scenarios' child JVM): the job's
 * own configuration, then the MiniCluster's. Closing cancels the job; its retained checkpoints stay
 * for the next start.
 */
public final class LocalClickJob implements AutoCloseable {

  /**
   * How the MiniCluster around the job is set up.
   *
   * @param restPort the port of the web UI and REST API
   * @param tmpDir Flink's temporary files, kept out of the system's temporary folder
   * @param restoreFrom a retained checkpoint or savepoint to start from
   * @param allowNonRestoredState whether state of operators the job no longer has may be dropped on
   *     restore
   * @param flinkConf settings on top of all others (a benchmark's variations, the metrics reporter)
   */
  public record Setup(
      int restPort,
      Path tmpDir,
      Optional<Path> restoreFrom,
      boolean allowNonRestoredState,
      Map<String, String> flinkConf) {

    public Setup {
      flinkConf = Map.copyOf(flinkConf);
    }

    /** A job with no state to restore and no extra settings. */
    public static Setup of(int restPort, Path tmpDir) {
      return new Setup(restPort, tmpDir, Optional.empty(), false, Map.of());
    }

    public Setup restoringFrom(Optional<Path> checkpoint, boolean allowNonRestoredState) {
      return new Setup(restPort, tmpDir, checkpoint, allowNonRestoredState, flinkConf);
    }

    public Setup withFlinkConf(Map<String, String> more) {
      Map<String, String> all = new LinkedHashMap<>(flinkConf);
      all.putAll(more);
      return new Setup(restPort, tmpDir, restoreFrom, allowNonRestoredState, all);
    }
  }

  /** RocksDB's memory for the dedup set and windows, unless a setup says otherwise. */
  public static final String MANAGED_MEMORY = "512m";

  private final JobClient client;
  private final FlinkRest rest;

  private LocalClickJob(JobClient client, FlinkRest rest) {
    this.client = client;
    this.rest = rest;
  }

  /**
   * The job's configuration ({@link ClickCountJob#configuration}) with the MiniCluster's on top.
   */
  public static Configuration configuration(ClickJobOptions options, Setup setup) {
    Configuration conf = ClickCountJob.configuration(options);
    conf.set(RestOptions.PORT, setup.restPort());
    conf.set(RestOptions.ADDRESS, "localhost");
    conf.setString("rest.bind-address", "localhost");
    // No jar upload through the web UI or REST API: an uploaded jar runs whatever code it holds.
    conf.setString("web.submit.enable", "false");
    // One slot per subtask; without a parallelism a local environment takes one per core.
    int slots =
        options.parallelism() > 0
            ? options.parallelism()
            : Runtime.getRuntime().availableProcessors();
    conf.setString("taskmanager.numberOfTaskSlots", String.valueOf(slots));
    // The MiniCluster's 128 MB default makes RocksDB, and so the job, several times slower on a
    // backlog.
    conf.setString("taskmanager.memory.managed.size", MANAGED_MEMORY);
    // The REST API serves metrics from a cache; the web UI and the tools that watch the job read
    // them every second, not every ten.
    conf.setString("metrics.fetcher.update-interval", "1000");
    try {
      Files.createDirectories(setup.tmpDir());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    conf.setString("io.tmp.dirs", setup.tmpDir().toString());
    conf.setString("web.tmpdir", setup.tmpDir().toString());
    setup
        .restoreFrom()
        .ifPresent(
            path -> conf.setString("execution.state-recovery.path", path.toUri().toString()));
    if (setup.allowNonRestoredState()) {
      // The upgrade across a state layout: every stateful uid carries its layout's version, so an
      // older checkpoint restores nothing and the job starts as without state, rewinding to recount
      // the open day.
      conf.setString("execution.state-recovery.ignore-unclaimed-state", "true");
    }
    setup.flinkConf().forEach(conf::setString);
    return conf;
  }

  /** Submits the job to a new MiniCluster in this JVM and returns once it is submitted. */
  public static LocalClickJob start(ClickJobOptions options, Setup setup) throws Exception {
    StreamExecutionEnvironment env = environment(options, setup);
    FlinkRest rest = FlinkRest.local(setup.restPort());
    try {
      return new LocalClickJob(env.executeAsync(ClickCountJob.JOB_NAME), rest);
    } catch (Exception | Error e) {
      rest.close();
      throw e;
    }
  }

  /**
   * Runs the job on a new MiniCluster in this JVM until it ends (for a child JVM that is killed to
   * stop).
   */
  public static void runToEnd(ClickJobOptions options, Setup setup) throws Exception {
    environment(options, setup).execute(ClickCountJob.JOB_NAME);
  }

  private static StreamExecutionEnvironment environment(ClickJobOptions options, Setup setup) {
    StreamExecutionEnvironment env =
        StreamExecutionEnvironment.createLocalEnvironmentWithWebUI(configuration(options, setup));
    ClickCountJob.build(env, options);
    return env;
  }

  public String jobId() {
    return client.getJobID().toHexString();
  }

  public JobClient client() {
    return client;
  }

  /** The MiniCluster's REST API. */
  public FlinkRest rest() {
    return rest;
  }

  /** Cancels the job and waits for its end; retained checkpoints (RETAIN_ON_CANCELLATION) stay. */
  @Override
  public void close() throws Exception {
    try {
      client.cancel().get(60, TimeUnit.SECONDS);
      try {
        client.getJobExecutionResult().get(60, TimeUnit.SECONDS);
      } catch (Exception expected) {
        // A cancelled job completes exceptionally; that is the normal end here.
      }
    } finally {
      rest.close();
    }
  }
}
