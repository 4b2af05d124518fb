package io.tally.launcher.flink;

import java.time.Duration;
import java.util.Collection;
import java.util.Comparator;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.client.deployment.StandaloneClusterId;
import org.apache.flink.client.program.rest.RestClusterClient;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.client.JobStatusMessage;
import org.apache.flink.runtime.messages.webmonitor.ClusterOverview;

/**
 * A Flink cluster's REST API through Flink's own client ({@link RestClusterClient}): jobs, savepoints,
 * stops, cancels and the slot overview, with errors a user can act on. Any Flink session cluster works,
 * not only Tally's local one.
 */
public final class FlinkRest implements AutoCloseable {

  /** A savepoint of a large state may take a while; a stuck one should not hang the command. */
  private static final Duration SAVEPOINT_TIMEOUT = Duration.ofMinutes(10);
  private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(30);

  private final RestEndpoint endpoint;
  private final RestClusterClient<StandaloneClusterId> client;

  private FlinkRest(RestEndpoint endpoint, RestClusterClient<StandaloneClusterId> client) {
    this.endpoint = endpoint;
    this.client = client;
  }

  /** A client of the cluster at {@code endpoint}; nothing is asked of the cluster yet. */
  public static FlinkRest connect(RestEndpoint endpoint) {
    Configuration conf = new Configuration();
    conf.set(RestOptions.ADDRESS, endpoint.host());
    conf.set(RestOptions.PORT, endpoint.port());
    // A command asks once: a cluster that is not there should say so in seconds, not after a minute of retries.
    conf.set(RestOptions.RETRY_MAX_ATTEMPTS, 1);
    conf.set(RestOptions.RETRY_DELAY, Duration.ofMillis(500));
    conf.set(RestOptions.CONNECTION_TIMEOUT, Duration.ofSeconds(5));
    try {
      return new FlinkRest(endpoint, new RestClusterClient<>(conf, StandaloneClusterId.getInstance()));
    } catch (Exception e) {
      throw new IllegalStateException("cannot make a Flink REST client for " + endpoint, e);
    }
  }

  public RestEndpoint endpoint() {
    return endpoint;
  }

  /** Task managers and slots, total and free. */
  public ClusterOverview overview() {
    return await(client.getClusterOverview(), REQUEST_TIMEOUT, "read the cluster overview");
  }

  /** Every job the cluster knows, running or not, newest first. */
  public Collection<JobStatusMessage> jobs() {
    return await(client.listJobs(), REQUEST_TIMEOUT, "list jobs").stream()
        .sorted(Comparator.comparingLong(JobStatusMessage::getStartTime).reversed())
        .toList();
  }

  /** The newest job named {@code name} that is not finished, cancelled or failed. */
  public Optional<JobStatusMessage> activeJob(String name) {
    return jobs().stream()
        .filter(job -> job.getJobName().equals(name) && !job.getJobState().isGloballyTerminalState())
        .findFirst();
  }

  /** The job named {@code name} that is not terminal, or a clear error when there is none. */
  public JobID requireActiveJob(String name) {
    return activeJob(name).map(JobStatusMessage::getJobId).orElseThrow(() ->
        new IllegalStateException("no running " + name + " job on the Flink cluster at " + endpoint
            + " (./tally flink list shows its jobs)"));
  }

  public JobStatus status(JobID job) {
    return await(client.getJobStatus(job), REQUEST_TIMEOUT, "read the status of job " + job);
  }

  /** Takes a savepoint of the running job into {@code dir} (the cluster's default when empty); returns its path. */
  public String savepoint(JobID job, Optional<String> dir) {
    return await(client.triggerSavepoint(job, dir.orElse(null), SavepointFormatType.CANONICAL),
        SAVEPOINT_TIMEOUT, "take a savepoint of job " + job);
  }

  /** Stops the job with a final savepoint into {@code dir} (the cluster's default when empty); returns its path. */
  public String stopWithSavepoint(JobID job, Optional<String> dir) {
    return await(client.stopWithSavepoint(job, false, dir.orElse(null), SavepointFormatType.CANONICAL),
        SAVEPOINT_TIMEOUT, "stop job " + job + " with a savepoint");
  }

  /** Cancels the job and waits until it is cancelled; retained checkpoints stay where they are. */
  public void cancel(JobID job) {
    await(client.cancel(job), REQUEST_TIMEOUT, "cancel job " + job);
    long deadline = System.nanoTime() + REQUEST_TIMEOUT.toNanos();
    while (!status(job).isGloballyTerminalState()) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("job " + job + " did not finish cancelling within " + REQUEST_TIMEOUT);
      }
      sleep(200);
    }
  }

  private <T> T await(CompletableFuture<T> answer, Duration timeout, String what) {
    try {
      return answer.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while trying to " + what, e);
    } catch (TimeoutException e) {
      throw new FlinkCommandFailure("the Flink cluster at " + endpoint + " did not " + what + " within " + timeout, e);
    } catch (ExecutionException e) {
      throw new FlinkCommandFailure(explain(e.getCause(), what), e.getCause());
    }
  }

  /** One line for the user: nobody listening, or what Flink answered. */
  private String explain(Throwable failure, String what) {
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (t instanceof java.net.ConnectException || t.getClass().getSimpleName().contains("ConnectException")) {
        return "no Flink cluster answers at " + endpoint + " (is ./tally up --cluster running? or pass --rest HOST:PORT)";
      }
    }
    Throwable root = failure;
    while (root.getCause() != null) {
      root = root.getCause();
    }
    String message = root.getMessage() == null ? root.toString() : root.getMessage().lines().findFirst().orElse("");
    return "could not " + what + " on the Flink cluster at " + endpoint + ": " + message;
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }

  @Override
  public void close() {
    client.close();
  }
}
