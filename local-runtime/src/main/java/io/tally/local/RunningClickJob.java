package io.tally.local;

import java.nio.file.Path;
import java.util.List;

/**
 * A click job that runs somewhere a tool can watch it: its Flink REST API, its restarts and its
 * logs, whether it runs in a MiniCluster of its own JVM or on a standalone Flink cluster.
 */
public interface RunningClickJob {

  /** The REST API of the Flink that runs the job. */
  FlinkRest rest();

  /** The job's id, as the REST API names it. */
  String jobId();

  /** Every restart the job has had: Flink's own, and kills of its JVM where it has one. */
  long restarts() throws InterruptedException;

  /** The files the job's processes log to. */
  List<Path> logFiles();
}
