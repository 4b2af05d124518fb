package io.tally.clickjob;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.clickjob.io.RewindToOpenDay;
import io.tally.counting.UniqueClicks;
import io.tally.counting.periods.Recount;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.graph.StreamGraph;
import org.apache.flink.streaming.api.graph.StreamNode;
import org.junit.jupiter.api.Test;

/**
 * The job's graph as savepoints see it: what maps state to operators, and what keeps an older
 * layout's state out of this one (docs/operations.md, "Upgrading the click job").
 */
class ClickCountJobLayoutTest {

  /**
   * The stateful uids of the earlier layouts: by code, by link shard, then windows behind dedup by
   * click id.
   */
  private static final Set<String> PREVIOUS_LAYOUTS =
      Set.of(
          "click-source",
          "drop-duplicate-clicks",
          "mark-new-visitors",
          "count-clicks-per-minute",
          "count-clicks-per-minute-v2",
          "roll-up-hours-and-days",
          "click-source-v3",
          "drop-duplicate-clicks-v3",
          "mark-new-visitors-v3",
          "count-clicks-per-minute-v3",
          "roll-up-hours-and-days-v3",
          "click-source-v4",
          "drop-duplicate-clicks-v4",
          "mark-new-visitors-v4",
          "count-clicks-per-minute-v4",
          "roll-up-hours-and-days-v4",
          "click-source-v5",
          "drop-duplicate-clicks-v5",
          "mark-new-visitors-v5",
          "count-clicks-per-link-v5",
          "click-source-v6",
          "drop-duplicate-clicks-v6",
          "mark-new-visitors-v6",
          "count-clicks-per-link-v6",
          "click-source-v7",
          "drop-duplicate-clicks-v7",
          "mark-new-visitors-v7",
          "count-clicks-per-link-v7");

  private final StreamGraph graph = graph();

  @Test
  void everyOperatorHasAStableUidAndAReadableName() {
    for (StreamNode node : graph.getStreamNodes()) {
      assertThat(node.getTransformationUID()).as("uid of %s", node.getOperatorName()).isNotBlank();
      assertThat(node.getOperatorName()).isNotBlank();
    }
  }

  @Test
  void noUidOfAnEarlierLayoutIsInTheGraph() {
    // With one of them back, restoring an old savepoint would bring that operator's state without
    // the state it was consistent with (the source's offsets without the windows they had filled).
    Set<String> uids =
        graph.getStreamNodes().stream()
            .map(StreamNode::getTransformationUID)
            .collect(Collectors.toSet());

    assertThat(uids).doesNotContainAnyElementsOf(PREVIOUS_LAYOUTS);
    assertThat(uids)
        .contains(ClickCountJob.SOURCE_UID, ClickCountJob.DEDUP_UID, ClickCountJob.COUNT_UID);
  }

  @Test
  void theMaximumParallelismIsFixedBecauseKeyedStateIsStoredByKeyGroup() {
    List<Integer> keyed =
        graph.getStreamNodes().stream()
            .filter(node -> node.getStatePartitioners().length > 0)
            .map(StreamNode::getMaxParallelism)
            .distinct()
            .toList();

    assertThat(keyed).containsExactly(ClickCountJob.MAX_PARALLELISM);
  }

  @Test
  void oneSinkTaskOfItsOwnWritesEveryAggregateTableSoAJdbcCommitDoesNotHoldTheCountingUp() {
    List<String> tasks = tasks();

    assertThat(tasks)
        .filteredOn(task -> task.startsWith("Count clicks per link"))
        .singleElement()
        .satisfies(task -> assertThat(task).doesNotContain("Upsert"));
    assertThat(tasks)
        .filteredOn(task -> task.contains("Upsert click_"))
        .singleElement()
        .satisfies(
            task ->
                assertThat(task)
                    .contains(
                        "click_counts", "click_hourly", "click_daily", "click_dimensions_hourly"));
  }

  @Test
  void clicksReachThePreAggregationWithinTheirTaskAndOnlyPartialsCrossToTheCounting() {
    List<String> tasks = tasks();

    assertThat(tasks)
        .filteredOn(task -> task.contains("Add up minutes"))
        .hasSize(2)
        .anySatisfy(task -> assertThat(task).contains(UniqueClicks.VISITORS_NAME))
        .anySatisfy(task -> assertThat(task).contains(UniqueClicks.DEDUP_NAME));
  }

  @Test
  void peoplesClicksAreDedupedWhereTheirMarksAreKeptAndTheRestByClickIdAlone() {
    StreamNode byId = node(UniqueClicks.DEDUP_NAME);
    StreamNode byVisitor = node(UniqueClicks.VISITOR_DEDUP_NAME);
    StreamNode marks = node(UniqueClicks.VISITORS_NAME);

    assertThat(byId.getStateKeySerializer())
        .isSameAs(io.tally.counting.serde.ClickIdSerializer.INSTANCE);
    assertThat(byVisitor.getStateKeySerializer())
        .isSameAs(io.tally.counting.serde.VisitorClickSerializer.INSTANCE);
    assertThat(marks.getStateKeySerializer())
        .isSameAs(io.tally.counting.serde.VisitorDaySerializer.INSTANCE);
    assertThat(byVisitor.getTypeSerializersIn())
        .as("clicks cross the network with their own serializer")
        .allSatisfy(
            serializer ->
                assertThat(serializer).isSameAs(io.tally.counting.serde.ClickSerializer.INSTANCE));
    assertThat(marks.getInEdges())
        .singleElement()
        .satisfies(
            edge -> {
              assertThat(edge.getSourceId()).isEqualTo(byVisitor.getId());
              assertThat(edge.getPartitioner().isPointwise()).as("no shuffle").isTrue();
            });
    assertThat(tasks())
        .as("a person's click crosses the network once, into its dedup")
        .anySatisfy(
            task ->
                assertThat(task)
                    .contains(UniqueClicks.VISITOR_DEDUP_NAME, UniqueClicks.VISITORS_NAME));
  }

  /** The names of the job's tasks: its operators as chained. */
  private List<String> tasks() {
    List<String> tasks = new java.util.ArrayList<>();
    graph.getJobGraph().getVertices().forEach(vertex -> tasks.add(vertex.getName()));
    return tasks;
  }

  private StreamNode node(String name) {
    return graph.getStreamNodes().stream()
        .filter(n -> n.getOperatorName().equals(name))
        .findFirst()
        .orElseThrow();
  }

  private static StreamGraph graph() {
    ClickJobOptions options =
        ClickJobOptions.parse(
            "--bootstrap-servers",
            "localhost:1",
            "--jdbc-url",
            "jdbc:postgresql://localhost:1/tally",
            "--parallelism",
            "2");
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    // Where a run without state would start is not part of the graph: Kafka is not asked.
    ClickCountJob.build(env, options, new RewindToOpenDay.Start(null, Recount.NONE));
    return env.getStreamGraph();
  }
}
