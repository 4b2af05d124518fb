package io.tally.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
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
 * A Flink cluster's REST API: jobs, savepoints, stops, cancels and the slot overview through
 * Flink's own client ({@link RestClusterClient}), with errors a user can act on; and the JSON the
 * web UI reads (job vertices, their metrics, checkpoints) for the tools that watch a job. Any Flink
 * session cluster works, a MiniCluster with its web UI as well as Tally's standalone one.
 */
public final class FlinkRest implements AutoCloseable {

  /** A savepoint of a large state may take a while; a stuck one should not hang the command. */
  private static final Duration SAVEPOINT_TIMEOUT = Duration.ofMinutes(10);

  private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(30);
  private static final ObjectMapper JSON = new ObjectMapper();

  /** How long a refresh of the REST API's metric cache is given before its values are read. */
  private static final Duration METRICS_REFRESH_WAIT = Duration.ofMillis(1500);

  private final RestEndpoint endpoint;
  private final RestClusterClient<StandaloneClusterId> client;
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  private FlinkRest(RestEndpoint endpoint, RestClusterClient<StandaloneClusterId> client) {
    this.endpoint = endpoint;
    this.client = client;
  }

  /** A client of the cluster at {@code endpoint}; nothing is asked of the cluster yet. */
  public static FlinkRest connect(RestEndpoint endpoint) {
    Configuration conf = new Configuration();
    conf.set(RestOptions.ADDRESS, endpoint.host());
    conf.set(RestOptions.PORT, endpoint.port());
    // A command asks once: a cluster that is not there should say so in seconds, not after a minute
    // of retries.
    conf.set(RestOptions.RETRY_MAX_ATTEMPTS, 1);
    conf.set(RestOptions.RETRY_DELAY, Duration.ofMillis(500));
    conf.set(RestOptions.CONNECTION_TIMEOUT, Duration.ofSeconds(5));
    try {
      return new FlinkRest(
          endpoint, new RestClusterClient<>(conf, StandaloneClusterId.getInstance()));
    } catch (Exception e) {
      throw new IllegalStateException("cannot make a Flink REST client for " + endpoint, e);
    }
  }

  /**
   * A client of the MiniCluster or cluster whose REST API listens on {@code port} of this machine.
   */
  public static FlinkRest local(int port) {
    return connect(RestEndpoint.local(port));
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
        .filter(
            job -> job.getJobName().equals(name) && !job.getJobState().isGloballyTerminalState())
        .findFirst();
  }

  /** The job named {@code name} that is not terminal, or a clear error when there is none. */
  public JobID requireActiveJob(String name) {
    return activeJob(name)
        .map(JobStatusMessage::getJobId)
        .orElseThrow(
            () ->
                new IllegalStateException(
                    "no running "
                        + name
                        + " job on the Flink cluster at "
                        + endpoint
                        + " (./tally flink list shows its jobs)"));
  }

  public JobStatus status(JobID job) {
    return await(client.getJobStatus(job), REQUEST_TIMEOUT, "read the status of job " + job);
  }

  /**
   * Takes a savepoint of the running job into {@code dir} (the cluster's default when empty);
   * returns its path.
   */
  public String savepoint(JobID job, Optional<String> dir) {
    return await(
        client.triggerSavepoint(job, dir.orElse(null), SavepointFormatType.CANONICAL),
        SAVEPOINT_TIMEOUT,
        "take a savepoint of job " + job);
  }

  /**
   * Stops the job with a final savepoint into {@code dir} (the cluster's default when empty);
   * returns its path.
   */
  public String stopWithSavepoint(JobID job, Optional<String> dir) {
    return await(
        client.stopWithSavepoint(job, false, dir.orElse(null), SavepointFormatType.CANONICAL),
        SAVEPOINT_TIMEOUT,
        "stop job " + job + " with a savepoint");
  }

  /** Cancels the job and waits until it is cancelled; retained checkpoints stay where they are. */
  public void cancel(JobID job) {
    await(client.cancel(job), REQUEST_TIMEOUT, "cancel job " + job);
    long deadline = System.nanoTime() + REQUEST_TIMEOUT.toNanos();
    while (!status(job).isGloballyTerminalState()) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(
            "job " + job + " did not finish cancelling within " + REQUEST_TIMEOUT);
      }
      sleep(200);
    }
  }

  /**
   * The JSON answer of a GET of {@code path}, such as {@code /jobs/overview}; fails unless it
   * answers 200.
   */
  public JsonNode get(String path) {
    try {
      HttpResponse<String> response =
          http.send(
              HttpRequest.newBuilder(URI.create(endpoint.url() + path))
                  .timeout(Duration.ofSeconds(10))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      if (response.statusCode() != 200) {
        throw new IllegalStateException(
            "GET " + path + " answered " + response.statusCode() + ": " + response.body());
      }
      return JSON.readTree(response.body());
    } catch (IOException e) {
      throw new UncheckedIOException("GET " + path, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** The id of the job vertex whose name contains {@code part}. */
  public String vertexId(String jobId, String part) {
    for (JsonNode vertex : get("/jobs/" + jobId).path("vertices")) {
      if (vertex.path("name").asText().contains(part)) {
        return vertex.path("id").asText();
      }
    }
    throw new IllegalStateException("no vertex named like '" + part + "' in job " + jobId);
  }

  /** A metric of a vertex, summed over its subtasks; empty until the metric fetcher has it. */
  public Optional<Double> vertexMetricSum(String jobId, String vertexId, String metric) {
    return subtaskMetric(jobId, vertexId, metric, "sum").map(value -> value.path("sum").asDouble());
  }

  /**
   * A metric of a vertex over its subtasks as {@code min}, {@code max} and {@code avg}; empty until
   * the metric fetcher has it.
   */
  public Optional<JsonNode> vertexMetricSpread(String jobId, String vertexId, String metric) {
    return subtaskMetric(jobId, vertexId, metric, "min,max,avg");
  }

  private Optional<JsonNode> subtaskMetric(
      String jobId, String vertexId, String metric, String aggregates) {
    String firstAggregate = aggregates.split(",")[0];
    JsonNode values =
        get(
            "/jobs/"
                + jobId
                + "/vertices/"
                + vertexId
                + "/subtasks/metrics?get="
                + metric
                + "&agg="
                + aggregates);
    for (JsonNode value : values) {
      if (value.path("id").asText().equals(metric) && value.has(firstAggregate)) {
        return Optional.of(value);
      }
    }
    return Optional.empty();
  }

  /**
   * The job's restarts, its job-level {@code numRestarts} metric. The REST API answers metrics from
   * a cache that a request refreshes in the background when it is older than {@code
   * metrics.fetcher.update-interval}: the first answer after a quiet spell is what the cache held
   * before it, which can be from before the last restart. So the metric is asked for once to start
   * that refresh, and read after it; an empty answer is asked again.
   */
  public long restarts(String jobId) throws InterruptedException {
    try {
      get("/jobs/" + jobId + "/metrics?get=numRestarts");
    } catch (RuntimeException notAnswering) {
      // Asked again below.
    }
    Thread.sleep(METRICS_REFRESH_WAIT.toMillis());
    for (int attempt = 0; attempt < 20; attempt++) {
      try {
        for (JsonNode metric : get("/jobs/" + jobId + "/metrics?get=numRestarts")) {
          return metric.path("value").asLong();
        }
      } catch (RuntimeException e) {
        // Not answering right now: ask again.
      }
      Thread.sleep(250);
    }
    throw new IllegalStateException("the job's numRestarts metric could not be read");
  }

  /**
   * The ids of the jobs that are running with every task running, from the jobs overview: a job
   * whose state is RUNNING may still wait for slots for some of its tasks, as after a lost
   * TaskManager.
   */
  public List<String> jobsWithEveryTaskRunning() {
    List<String> running = new ArrayList<>();
    for (JsonNode job : get("/jobs/overview").path("jobs")) {
      JsonNode tasks = job.path("tasks");
      if ("RUNNING".equals(job.path("state").asText())
          && tasks.path("running").asInt() == tasks.path("total").asInt()) {
        running.add(job.path("jid").asText());
      }
    }
    return running;
  }

  /** The job's checkpoint statistics: counts, summary, latest and history. */
  public JsonNode checkpoints(String jobId) {
    return get("/jobs/" + jobId + "/checkpoints");
  }

  /** One checkpoint's statistics, with the state size of each task. */
  public JsonNode checkpointDetails(String jobId, long checkpointId) {
    return get("/jobs/" + jobId + "/checkpoints/details/" + checkpointId);
  }

  private <T> T await(CompletableFuture<T> answer, Duration timeout, String what) {
    try {
      return answer.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while trying to " + what, e);
    } catch (TimeoutException e) {
      throw new FlinkCommandFailure(
          "the Flink cluster at " + endpoint + " did not " + what + " within " + timeout, e);
    } catch (ExecutionException e) {
      throw new FlinkCommandFailure(explain(e.getCause(), what), e.getCause());
    }
  }

  /** One line for the user: nobody listening, or what Flink answered. */
  private String explain(Throwable failure, String what) {
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (t instanceof java.net.ConnectException
          || t.getClass().getSimpleName().contains("ConnectException")) {
        return "no Flink cluster answers at "
            + endpoint
            + " (is ./tally up --cluster running? or pass --rest HOST:PORT)";
      }
    }
    Throwable root = failure;
    while (root.getCause() != null) {
      root = root.getCause();
    }
    String message =
        root.getMessage() == null
            ? root.toString()
            : root.getMessage().lines().findFirst().orElse("");
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
