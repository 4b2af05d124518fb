package io.tally.counting.functions;

import static io.tally.counting.Clicks.MINUTE;
import static io.tally.counting.Clicks.asBot;
import static io.tally.counting.Clicks.at;
import static io.tally.counting.Clicks.click;
import static io.tally.counting.Clicks.idAt;
import static io.tally.counting.Clicks.visit;
import static io.tally.counting.Clicks.withId;
import static org.assertj.core.api.Assertions.assertThat;

import io.tally.counting.records.Click;
import java.util.List;
import java.util.UUID;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.api.operators.ProcessOperator;
import org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Tests for {@link RouteToDedup}: the path a click takes reads only its event, and the instant from
 * which people's clicks go by visitor is fixed once for the job's state.
 */
class RouteToDedupTest {

  private static final long UPGRADED_AT = at(10 * MINUTE);
  private static final int MAX_PARALLELISM = 128;

  @RegisterExtension final HarnessesOpened harnesses = new HarnessesOpened();

  private OneInputStreamOperatorTestHarness<Click, Click> open(
      OperatorSubtaskState state, int oldParallelism, int parallelism, int subtask)
      throws Exception {
    return open(state, oldParallelism, parallelism, subtask, UPGRADED_AT, false);
  }

  /**
   * A subtask of a graph built at {@code builtAt}, restored from {@code state} of a run at {@code
   * oldParallelism} unless null; {@code submittedToResume} as the job's submission says.
   */
  private OneInputStreamOperatorTestHarness<Click, Click> open(
      OperatorSubtaskState state,
      int oldParallelism,
      int parallelism,
      int subtask,
      long builtAt,
      boolean submittedToResume)
      throws Exception {
    var harness =
        new OneInputStreamOperatorTestHarness<>(
            new ProcessOperator<>(new RouteToDedup(builtAt, submittedToResume)),
            MAX_PARALLELISM,
            parallelism,
            subtask);
    return harnesses.open(harness, state, MAX_PARALLELISM, oldParallelism, parallelism, subtask);
  }

  /** A person's click with a visitor hash and a version-7 id made at its time. */
  private static Click person(String label, long ts) {
    return withId(visit(label, "abc", ts, "ana"), idAt(label, ts));
  }

  private static List<UUID> byVisitor(OneInputStreamOperatorTestHarness<Click, Click> harness) {
    var side = harness.getSideOutput(RouteToDedup.BY_VISITOR);
    return side == null ? List.of() : side.stream().map(r -> r.getValue().clickId()).toList();
  }

  private static List<UUID> byId(OneInputStreamOperatorTestHarness<Click, Click> harness) {
    return harness.extractOutputValues().stream().map(Click::clickId).toList();
  }

  private static void send(OneInputStreamOperatorTestHarness<Click, Click> harness, Click... clicks)
      throws Exception {
    for (Click click : clicks) {
      harness.processElement(click, click.ts());
    }
  }

  @Test
  void onAFirstStartPeoplesClicksGoByVisitorWhateverTheClassifierSaysAndTheRestById()
      throws Exception {
    var harness = open(null, 1, 1, 0);
    Click person = person("person", at(0));
    Click crawler = asBot(person("crawler", at(0)), "crawler");
    Click head = asBot(person("head", at(0)), "head");
    Click burst = asBot(person("burst", at(0)), "burst");
    Click noVisitor = withId(click("anonymous", "abc", at(0)), idAt("anonymous", at(0)));
    Click notVersion7 = visit("v3", "abc", at(0), "ana");

    send(harness, person, crawler, head, burst, noVisitor, notVersion7);

    assertThat(byVisitor(harness)).containsExactly(person.clickId(), crawler.clickId());
    assertThat(byId(harness))
        .containsExactly(
            head.clickId(), burst.clickId(), noVisitor.clickId(), notVersion7.clickId());
  }

  @Test
  void stateOfAJobWithoutThisPathKeepsClicksMadeBeforeTheUpgradeById() throws Exception {
    assertKeepsClicksMadeBeforeTheUpgradeById(
        open(OperatorSubtaskState.builder().build(), 1, 1, 0));
  }

  @Test
  void aJobSubmittedToResumeKeepsClicksMadeBeforeTheUpgradeByIdThoughThisTaskHadNoState()
      throws Exception {
    assertKeepsClicksMadeBeforeTheUpgradeById(open(null, 1, 1, 0, UPGRADED_AT, true));
  }

  private static void assertKeepsClicksMadeBeforeTheUpgradeById(
      OneInputStreamOperatorTestHarness<Click, Click> harness) throws Exception {
    Click before = person("before", UPGRADED_AT - 1);
    Click after = person("after", UPGRADED_AT);

    send(harness, before, after);

    assertThat(byId(harness)).containsExactly(before.clickId());
    assertThat(byVisitor(harness)).containsExactly(after.clickId());
  }

  @Test
  void theChoiceMadeOnceHoldsThroughRestoresAndRescalesOfLaterGraphs() throws Exception {
    OperatorSubtaskState fresh = open(null, 1, 1, 0).snapshot(1, 1);
    OperatorSubtaskState upgraded =
        open(OperatorSubtaskState.builder().build(), 1, 1, 0).snapshot(1, 1);
    long laterGraph = at(60 * MINUTE);
    Click early = person("early", at(0));
    Click afterUpgrade = person("after-upgrade", at(20 * MINUTE));

    for (int subtask = 0; subtask < 2; subtask++) {
      // A later graph resumes from a savepoint of its own: the submission says so too.
      var fromFresh = open(fresh, 1, 2, subtask, laterGraph, true);
      var fromUpgraded = open(upgraded, 1, 2, subtask, laterGraph, true);
      send(fromFresh, early);
      send(fromUpgraded, early, afterUpgrade);

      assertThat(byVisitor(fromFresh)).as("subtask " + subtask).containsExactly(early.clickId());
      assertThat(byId(fromUpgraded)).as("subtask " + subtask).containsExactly(early.clickId());
      assertThat(byVisitor(fromUpgraded))
          .as("subtask " + subtask)
          .containsExactly(afterUpgrade.clickId());
    }
  }
}
