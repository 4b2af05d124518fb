package io.tally.bench.pipeline;

import io.tally.local.FlinkRest;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.LongConsumer;

/**
 * The records a running click job's dedup vertices have taken in (summed over their subtasks),
 * sampled from Flink's REST API as they grow: how fast the job reads the backlog, and how far it
 * had read at any moment. Each click reaches one dedup: by click id, or (a person's, in a job that
 * has it) per visitor. The job has every event when the count reaches the topic's size.
 */
final class DedupInput {

  static final String VERTEX = "Drop duplicate click ids";

  /** The dedup per visitor, in a job that dedups people's clicks where their marks are kept. */
  static final String VISITOR_VERTEX = "Drop duplicate clicks per visitor";

  private static final long PATIENCE_MINUTES = 20;

  private final FlinkRest rest;
  private final String jobId;
  private final String vertexId;
  private final List<String> vertexIds;

  /** (nanos, records in, epoch millis) at each change of the count, in order. */
  private final List<long[]> samples = new ArrayList<>();

  private DedupInput(FlinkRest rest, String jobId, String vertexId, List<String> vertexIds) {
    this.rest = rest;
    this.jobId = jobId;
    this.vertexId = vertexId;
    this.vertexIds = vertexIds;
  }

  /** The dedup vertex of a job just submitted, once the REST API knows it. */
  static DedupInput of(FlinkRest rest, String jobId) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (true) {
      try {
        String byId = rest.vertexId(jobId, VERTEX);
        List<String> all = new ArrayList<>(List.of(byId));
        for (var vertex : rest.get("/jobs/" + jobId).path("vertices")) {
          if (vertex.path("name").asText().contains(VISITOR_VERTEX)) {
            all.add(vertex.path("id").asText());
          }
        }
        return new DedupInput(rest, jobId, byId, List.copyOf(all));
      } catch (RuntimeException e) {
        if (System.nanoTime() > deadline) {
          throw e;
        }
        Thread.sleep(200);
      }
    }
  }

  /** The dedup by click id. */
  String vertexId() {
    return vertexId;
  }

  /**
   * The dedup vertex that has taken in the most records so far: per visitor where people's clicks
   * are deduped beside their marks, by click id where the clicks have no visitor hash.
   */
  String busiestVertexId() {
    return vertexIds.stream()
        .max(
            Comparator.comparingDouble(
                vertex -> rest.vertexMetricSum(jobId, vertex, "numRecordsIn").orElse(0.0)))
        .orElseThrow();
  }

  /** Every dedup vertex, the one by click id first. */
  List<String> vertexIds() {
    return vertexIds;
  }

  /** The samples so far, growing as more are taken; what a state curve reads. */
  List<long[]> samples() {
    return samples;
  }

  /**
   * Samples every 250 ms until the vertex has taken in {@code records}, handing each new count to
   * {@code onChange}.
   */
  void awaitRecords(long records, LongConsumer onChange) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(PATIENCE_MINUTES);
    long last = -1;
    while (true) {
      Optional<Double> in = recordsIn();
      long now = System.nanoTime();
      if (in.isPresent() && in.get().longValue() != last) {
        last = in.get().longValue();
        samples.add(new long[] {now, last, System.currentTimeMillis()});
        onChange.accept(last);
      }
      if (last >= records) {
        return;
      }
      if (now > deadline) {
        throw new IllegalStateException(
            "the job took in "
                + last
                + " of "
                + records
                + " events in "
                + PATIENCE_MINUTES
                + " min");
      }
      Thread.sleep(250);
    }
  }

  /** The records every dedup vertex has taken in, once the metric fetcher has them all. */
  private Optional<Double> recordsIn() {
    double sum = 0;
    for (String vertex : vertexIds) {
      Optional<Double> in = rest.vertexMetricSum(jobId, vertex, "numRecordsIn");
      if (in.isEmpty()) {
        return Optional.empty();
      }
      sum += in.get();
    }
    return Optional.of(sum);
  }

  /** When the last sample was taken ({@link System#nanoTime()}). */
  long lastNanos() {
    return last()[0];
  }

  /** Records per second between the first samples at or above {@code low} and {@code high}. */
  double rate(long low, long high) {
    long[] a = samples.stream().filter(s -> s[1] >= low).findFirst().orElse(samples.get(0));
    long[] b = samples.stream().filter(s -> s[1] >= high).findFirst().orElse(last());
    return b[0] == a[0] ? Double.NaN : (b[1] - a[1]) / ((b[0] - a[0]) / 1e9);
  }

  private long[] last() {
    return samples.get(samples.size() - 1);
  }
}
