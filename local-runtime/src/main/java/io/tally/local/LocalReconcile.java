package io.tally.local;

import io.tally.reconcile.ReconcileJob;
import io.tally.reconcile.ReconcileOptions;
import io.tally.reconcile.ReconcileReport;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.NettyShuffleEnvironmentOptions;
import org.apache.flink.core.execution.JobListener;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

/**
 * Batch-reconcile's recount on a MiniCluster of its own in this JVM, set up the same way wherever
 * Tally runs it on one machine ({@code ./tally reconcile}, the benchmarks, the chaos scenarios): a
 * cluster of its own so the recount never waits for the slots a streaming job holds.
 */
public final class LocalReconcile {

  private LocalReconcile() {}

  /** Recounts what the options name on a MiniCluster whose temporary files go to {@code tmpDir}. */
  public static ReconcileReport run(ReconcileOptions options, Path tmpDir) throws Exception {
    return run(options, tmpDir, Map.of(), List.of());
  }

  /**
   * The same, with Flink settings on top of the cluster's (a benchmark's variations) and listeners
   * that see the job submitted and finished (a benchmark's clock).
   */
  public static ReconcileReport run(
      ReconcileOptions options,
      Path tmpDir,
      Map<String, String> flinkConf,
      List<JobListener> listeners)
      throws Exception {
    int parallelism =
        options.parallelism() > 0
            ? options.parallelism()
            : Runtime.getRuntime().availableProcessors();
    Configuration conf = new Configuration();
    conf.setString("io.tmp.dirs", Files.createDirectories(tmpDir).toString());
    conf.setString("taskmanager.numberOfTaskSlots", String.valueOf(parallelism));
    // Within one JVM a shuffle's bytes cross no network; compressing them saves only temporary
    // file bytes, and costs CPU the recount is short of.
    conf.set(
        NettyShuffleEnvironmentOptions.SHUFFLE_COMPRESSION_CODEC,
        NettyShuffleEnvironmentOptions.CompressionCodec.NONE);
    flinkConf.forEach(conf::setString);
    StreamExecutionEnvironment env =
        StreamExecutionEnvironment.createLocalEnvironment(parallelism, conf);
    listeners.forEach(env::registerJobListener);
    return ReconcileJob.run(env, options, Instant.now());
  }

  /**
   * The options of a recount of {@code [from, to)} of a topic on the services of this machine.
   *
   * @param parallelism the recount's parallelism; this machine's cores when 0
   */
  public static ReconcileOptions options(
      LocalServices services,
      String topic,
      Instant from,
      Instant to,
      int parallelism,
      String... more) {
    List<String> args =
        new ArrayList<>(
            List.of(
                "--from", from.toString(),
                "--to", to.toString(),
                "--bootstrap-servers", services.bootstrapServers(),
                "--topic", topic,
                "--jdbc-url", services.jdbcUrl(),
                "--jdbc-user", services.dbUser(),
                "--jdbc-password", services.dbPassword(),
                "--parallelism", String.valueOf(parallelism)));
    args.addAll(List.of(more));
    return ReconcileOptions.parse(args.toArray(String[]::new));
  }
}
